import { createECDH, createPrivateKey, type KeyObject } from 'node:crypto';
import { type EcP256PublicJwk, JwkError, generateAgentKeyPair, jwkThumbprint, parsePublicP256Jwk } from '@mandate/protocol';
import { KeyFileError } from '../client/errors.ts';

/** A private EC P-256 JWK: the public members plus `d`. */
export type PrivateJwk = EcP256PublicJwk & { d: string };

/**
 * The agent's key pair. The private half signs agent JWTs and DPoP proofs and never leaves this
 * object except through `toPrivateJwk()` (for the key file); the public half is what the owner
 * registers.
 */
export class AgentKey {
  readonly privateKey: KeyObject;
  readonly publicJwk: EcP256PublicJwk;
  readonly #d: string;

  private constructor(privateKey: KeyObject, publicJwk: EcP256PublicJwk, d: string) {
    this.privateKey = privateKey;
    this.publicJwk = publicJwk;
    this.#d = d;
  }

  static async generate(): Promise<AgentKey> {
    const { privateKey } = await generateAgentKeyPair();
    const jwk = (await crypto.subtle.exportKey('jwk', privateKey)) as Record<string, unknown>;
    return AgentKey.fromJwk(jwk);
  }

  /**
   * Loads a private JWK. Its public members must be a valid P-256 point and must belong to `d`: a
   * file whose halves disagree would sign with one key while the owner registered the other.
   */
  static fromJwk(jwk: unknown): AgentKey {
    const obj = (typeof jwk === 'object' && jwk !== null ? jwk : {}) as Record<string, unknown>;
    const d = obj['d'];
    if (typeof d !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(d)) throw new KeyFileError('the private key must be an EC P-256 JWK with d');
    let publicJwk: EcP256PublicJwk;
    try {
      publicJwk = parsePublicP256Jwk({ kty: obj['kty'], crv: obj['crv'], x: obj['x'], y: obj['y'] });
    } catch (e) {
      throw new KeyFileError(`invalid agent key: ${e instanceof JwkError ? e.message : String(e)}`);
    }
    // Derive x and y from d and compare them first: OpenSSL 3.0 (Node 20, 22) keeps the x and y it is
    // given without checking them against d, while newer OpenSSL (Node 24) refuses such a JWK outright,
    // which would read as a bad d rather than as halves that disagree.
    let point: Buffer; // 0x04 || x || y
    try {
      const ecdh = createECDH('prime256v1');
      ecdh.setPrivateKey(Buffer.from(d, 'base64url'));
      point = ecdh.getPublicKey();
    } catch {
      throw new KeyFileError('invalid agent key: d is not a P-256 private key');
    }
    if (point.subarray(1, 33).toString('base64url') !== publicJwk.x || point.subarray(33, 65).toString('base64url') !== publicJwk.y) {
      throw new KeyFileError('invalid agent key: x and y do not belong to d');
    }
    let privateKey: KeyObject;
    try {
      privateKey = createPrivateKey({ key: { ...publicJwk, d }, format: 'jwk' });
    } catch {
      throw new KeyFileError('invalid agent key: d is not a P-256 private key');
    }
    return new AgentKey(privateKey, publicJwk, d);
  }

  /** RFC 7638 thumbprint: the `jkt` the service shows for the agent and binds every pass to. */
  thumbprint(): Promise<string> {
    return jwkThumbprint(this.publicJwk);
  }

  /** The private JWK, only for writing the key file. */
  toPrivateJwk(): PrivateJwk {
    return { ...this.publicJwk, d: this.#d };
  }

  /** Never print the private half by accident (console.log, JSON.stringify, util.inspect). */
  toJSON(): EcP256PublicJwk {
    return this.publicJwk;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `AgentKey(${this.publicJwk.x.slice(0, 8)}…)`;
  }
}
