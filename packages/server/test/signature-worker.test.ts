import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { generateKeyPairSync, sign } from 'node:crypto';
import { createDpopProof, generateAgentKeyPair, verifyDpopSignature } from '@mandate/protocol';
import { signatureWorker } from '../src/crypto/signature-worker.ts';

// Cloud verify checks proof signatures on a thread of its own, in batches (crypto/signature-worker.ts).

const b64 = (v: string | Buffer) => Buffer.from(v).toString('base64url');

function signed(privateKey: ReturnType<typeof generateKeyPairSync>['privateKey'], payload: object) {
  const input = `${b64(JSON.stringify({ alg: 'ES256' }))}.${b64(JSON.stringify(payload))}`;
  return { input, signature: b64(sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' })) };
}

describe('signature worker', () => {
  const worker = signatureWorker();
  after(() => worker.close());
  const a = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const b = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const keyA = a.publicKey.export({ format: 'jwk' }) as { x: string; y: string };
  const keyB = b.publicKey.export({ format: 'jwk' }) as { x: string; y: string };

  it('answers each check of a batch with its own verdict, in order', async () => {
    const good = signed(a.privateKey, { n: 1 });
    const other = signed(b.privateKey, { n: 2 });
    const tampered = { ...good, input: `${good.input.split('.')[0]}.${b64(JSON.stringify({ n: 3 }))}` };
    // Asked in one turn of the event loop: one batch.
    const verdicts = await Promise.all([
      worker.check(good.input, good.signature, keyA),
      worker.check(other.input, other.signature, keyA), // signed by B, checked against A
      worker.check(tampered.input, tampered.signature, keyA),
      worker.check(other.input, other.signature, keyB),
      worker.check(good.input, 'not-a-signature', keyA),
      worker.check(good.input, good.signature, { x: 'AAAA', y: 'AAAA' }), // not a point: no key
    ]);
    assert.deepEqual(verdicts, [true, false, false, true, false, false]);
  });

  it('is what the protocol checks a DPoP proof with, refusing a proof signed by another key than its header names', async () => {
    const agent = await generateAgentKeyPair();
    const proof = await createDpopProof(agent.privateKey, agent.publicJwk, { htm: 'GET', htu: 'https://shop.example/x', accessToken: 'pass' });
    const { claims } = await verifyDpopSignature(proof, worker.check);
    assert.equal(claims.htm, 'GET');
    const stranger = await generateAgentKeyPair();
    const [h, p] = proof.split('.');
    const forged = await createDpopProof(stranger.privateKey, stranger.publicJwk, { htm: 'GET', htu: 'https://shop.example/x', accessToken: 'pass' });
    await assert.rejects(verifyDpopSignature(`${h}.${p}.${forged.split('.')[2]}`, worker.check), { code: 'invalid_dpop' });
  });

  it('once closed, a check fails: it is never taken for a verdict on the proof', async () => {
    const closed = signatureWorker();
    await closed.close();
    const good = signed(a.privateKey, { n: 1 });
    await assert.rejects(closed.check(good.input, good.signature, keyA), /closed/);
    const agent = await generateAgentKeyPair();
    const proof = await createDpopProof(agent.privateKey, agent.publicJwk, { htm: 'GET', htu: 'https://shop.example/x', accessToken: 'pass' });
    await assert.rejects(verifyDpopSignature(proof, closed.check), (e: unknown) => !(e as { code?: unknown }).code?.toString().startsWith('invalid'));
  });
});
