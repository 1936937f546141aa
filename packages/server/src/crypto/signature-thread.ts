import { type KeyObject, createPublicKey, verify } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import type { WithId } from '../threads/worker-client.ts';

/**
 * The thread that checks DPoP proof signatures for cloud verify (signature-worker.ts): each message
 * is a batch, answered with one verdict per item, in order.
 */

export interface SignatureItem {
  /** The JWS's `header.payload`. */
  input: string;
  /** Its third segment, base64url. */
  signature: string;
  /** The public P-256 key's coordinates (validated by the caller: proof-key-cache.ts). */
  x: string;
  y: string;
}

export interface SignatureBatch {
  items: readonly SignatureItem[];
}

export interface SignatureVerdicts {
  id: number;
  ok: boolean[];
}

const port = parentPort;
if (port === null) throw new Error('signature-thread.ts runs as a worker thread');

/** Agents send many proofs with the same key: the last keys are kept, imported (as proof-key-cache.ts). */
const MAX_KEYS = 1024;
const keys = new Map<string, KeyObject>();

function keyOf(x: string, y: string): KeyObject {
  const id = `${x}.${y}`;
  let key = keys.get(id);
  if (key === undefined) {
    key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x, y }, format: 'jwk' });
    if (keys.size >= MAX_KEYS) keys.delete(keys.keys().next().value as string);
    keys.set(id, key);
  }
  return key;
}

function check(i: SignatureItem): boolean {
  try {
    return verify('sha256', Buffer.from(i.input, 'ascii'), { key: keyOf(i.x, i.y), dsaEncoding: 'ieee-p1363' }, Buffer.from(i.signature, 'base64url'));
  } catch {
    return false; // a key or signature node:crypto cannot read verifies nothing
  }
}

port.on('message', (b: WithId<SignatureBatch> | 'close') => {
  if (b === 'close') {
    port.close();
    return;
  }
  port.postMessage({ id: b.id, ok: b.items.map(check) } satisfies SignatureVerdicts);
});
