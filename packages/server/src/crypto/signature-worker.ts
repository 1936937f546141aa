import type { SignatureChecker } from '@mandate/protocol';
import { batched } from '../batching.ts';
import { siblingModule, startWorker } from '../threads/start-worker.ts';
import { workerClient } from '../threads/worker-client.ts';
import type { SignatureBatch, SignatureItem, SignatureVerdicts } from './signature-thread.ts';

/**
 * Cloud verify's proof signatures, checked on a thread of their own (signature-thread.ts), in
 * batches: every check asked for during one turn of the event loop goes in one message. The event
 * loop keeps the HTTP work and hands over a batch for about what one check inline would cost it.
 * Measured with 128 verifications in flight (bench/README.md): 0.88 against 0.74 x the baseline
 * with the checks inline, the event loop at 150 µs per verification against 261 µs, the same CPU in
 * all. A check on the libuv thread pool instead (one hand-over per signature) cost about 75 µs more
 * CPU per verification.
 *
 * A thread that stops fails the checks it held (the verification fails with a server error, never
 * with a verdict on the proof) and the next batch starts a new one.
 */
export interface SignatureWorker {
  check: SignatureChecker;
  close(): Promise<void>;
}

export function signatureWorker(onRestart?: () => void): SignatureWorker {
  const client = workerClient<SignatureBatch, SignatureVerdicts>(() => startWorker(siblingModule('./signature-thread', import.meta.url)), 'signature', onRestart);
  // Any number of batches out at once: the thread takes them in turn, and the event loop need not wait.
  const checkOne = batched<SignatureItem, boolean>(async (items) => (await client.send({ items })).ok, { maxInFlight: Number.POSITIVE_INFINITY });
  return {
    check: (input, signature, key) => checkOne({ input, signature, x: key.x, y: key.y }),
    close: () => client.close('close', 1000),
  };
}
