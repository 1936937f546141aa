import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { join } from 'node:path';
import { type Ed25519PublicJwk, JwkError, ed25519Thumbprint, parseEd25519PublicJwk } from '@mandate/protocol';
import { KeyFileError } from '../client/errors.ts';
import { readPrivateFile, writePrivateFileAtomic } from './secure-fs.ts';

/**
 * The agent's Web Bot Auth key (decisions §22): an Ed25519 key beside its P-256 agent key, used only
 * to sign requests to sites (RFC 9421) and the directory the service publishes for it. The private
 * half leaves this object only through `toPrivateJwk()` (for the key file).
 */
export class WbaKey {
  readonly privateKey: KeyObject;
  readonly publicJwk: Ed25519PublicJwk;
  /** RFC 7638 thumbprint: the `keyid` of every signature and the `kid` in the directory. */
  readonly keyid: string;
  readonly #d: string;

  private constructor(privateKey: KeyObject, publicJwk: Ed25519PublicJwk, d: string) {
    this.privateKey = privateKey;
    this.publicJwk = publicJwk;
    this.keyid = ed25519Thumbprint(publicJwk);
    this.#d = d;
  }

  static generate(): WbaKey {
    return WbaKey.fromJwk(generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }));
  }

  /** Loads a private Ed25519 JWK; its `x` must belong to its `d`. */
  static fromJwk(jwk: unknown): WbaKey {
    const obj = (typeof jwk === 'object' && jwk !== null ? jwk : {}) as Record<string, unknown>;
    const d = obj['d'];
    if (typeof d !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(d)) throw new KeyFileError('the Web Bot Auth key must be an Ed25519 JWK with d');
    let publicJwk: Ed25519PublicJwk;
    let privateKey: KeyObject;
    try {
      publicJwk = parseEd25519PublicJwk({ kty: obj['kty'], crv: obj['crv'], x: obj['x'] });
      privateKey = createPrivateKey({ key: { ...publicJwk, d }, format: 'jwk' });
    } catch (e) {
      throw new KeyFileError(`invalid Web Bot Auth key: ${e instanceof JwkError ? e.message : 'd is not an Ed25519 private key'}`);
    }
    if ((createPublicKey(privateKey).export({ format: 'jwk' }) as { x?: string }).x !== publicJwk.x) throw new KeyFileError('invalid Web Bot Auth key: x does not belong to d');
    return new WbaKey(privateKey, publicJwk, d);
  }

  toPrivateJwk(): Ed25519PublicJwk & { d: string } {
    return { ...this.publicJwk, d: this.#d };
  }

  /** Never print the private half by accident. */
  toJSON(): Ed25519PublicJwk {
    return this.publicJwk;
  }
}

/**
 * `wba-key.json` in the agent directory: the key and, once registered, the agent's address and when
 * the directory signature it uploaded expires (epoch seconds), so a new process knows whether to renew.
 */
export type WbaKeyFile = { key: WbaKey; signatureAgent: string | null; proofExpiresAt: number };

export const wbaKeyFilePath = (dir: string): string => join(dir, 'wba-key.json');

/** The Web Bot Auth key file in `dir`, or undefined when there is none. */
export function loadWbaKeyFile(dir: string): WbaKeyFile | undefined {
  const file = wbaKeyFilePath(dir);
  const text = readPrivateFile(file);
  if (text === undefined) return undefined;
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new KeyFileError(`${file} is not valid JSON`);
  }
  if (typeof raw !== 'object' || raw === null || raw['version'] !== 1) throw new KeyFileError(`${file} is not a mandate-agent Web Bot Auth key file (version 1)`);
  const address = raw['signature_agent'] ?? null;
  if (address !== null && typeof address !== 'string') throw new KeyFileError(`${file}: signature_agent must be a string`);
  const expires = raw['proof_expires_at'] ?? 0;
  if (typeof expires !== 'number' || !Number.isSafeInteger(expires)) throw new KeyFileError(`${file}: proof_expires_at must be an integer`);
  return { key: WbaKey.fromJwk(raw['private_jwk']), signatureAgent: address, proofExpiresAt: expires };
}

/** Writes `wba-key.json` (0600, atomically). */
export function saveWbaKeyFile(dir: string, contents: WbaKeyFile): void {
  const data = { version: 1, private_jwk: contents.key.toPrivateJwk(), signature_agent: contents.signatureAgent, proof_expires_at: contents.proofExpiresAt };
  writePrivateFileAtomic(wbaKeyFilePath(dir), `${JSON.stringify(data, null, 2)}\n`);
}
