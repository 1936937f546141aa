import { type KeyObject, createSign } from 'node:crypto';

/** Bytes hashed per step: a few ms of SHA-256, then the event loop may run other work. */
const HASH_STEP_BYTES = 1 << 20;

/**
 * A compact ES256 JWS over a payload already encoded as base64url bytes, given in pieces (the
 * revocation list: MBs, written in steps by domain/revocation/revocation-text.ts). The header is
 * written as jose writes it for the other service tokens (`{"alg","kid","typ"}`), so verifiers see no
 * difference. The pieces are hashed one by one, with the event loop free every HASH_STEP_BYTES, and
 * never copied into one buffer; only the final signature over the digest is computed in one go
 * (well under a ms). The JWS comes back in pieces too, to be sent as they are.
 */
export async function signEncodedPayload(privateKey: KeyObject, header: { kid: string; typ: string }, encodedPayload: readonly Uint8Array[]): Promise<Buffer[]> {
  const head = Buffer.from(`${Buffer.from(JSON.stringify({ alg: 'ES256', kid: header.kid, typ: header.typ })).toString('base64url')}.`, 'ascii');
  const signer = createSign('sha256').update(head);
  let sinceBreath = 0;
  for (const piece of encodedPayload) {
    signer.update(piece);
    sinceBreath += piece.length;
    if (sinceBreath >= HASH_STEP_BYTES) {
      sinceBreath = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  // IEEE P1363 (r || s) is the JWS form of an ES256 signature.
  const signature = signer.sign({ key: privateKey, dsaEncoding: 'ieee-p1363' });
  return [head, ...encodedPayload.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)), Buffer.from(`.${signature.toString('base64url')}`, 'ascii')];
}
