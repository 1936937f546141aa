import { createPrivateKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { KeyResolver } from '@mandate/protocol';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK, type JWTPayload } from 'jose';
import type { Clock } from '../clock.ts';
import type { SigningKeyRecord, SigningKeysRepo } from '../store/ports/index.ts';
import type { KeyEncryption } from './key-encryption.ts';
import { signEncodedPayload } from './revocation-jws.ts';
import { signEs256Jwt } from './es256-jwt.ts';

interface LoadedKey {
  kid: string;
  publicJwk: JWK;
  record: SigningKeyRecord;
  /** The same private key for node:crypto's one-shot sign (es256-jwt.ts), which tokens are signed with. */
  signingKey?: KeyObject;
  publicKey?: CryptoKey;
}

export interface SigningKeysOptions {
  encryption: KeyEncryption | null;
  /** How long a retired key stays published and verifiable. */
  graceSec: number;
  /** How often a node re-reads the key table, so a rotation on one node reaches the others. */
  refreshMs?: number;
}

/**
 * Default of `refreshMs`. Short, because a "revoke now" rotation on one node must stop the other
 * nodes verifying (and signing with) the revoked key at once: within a second. The read is one small
 * query per node per second at most (only when keys are used), shared by concurrent callers.
 */
export const KEY_REFRESH_MS = 1000;

export interface Rotated {
  /** The new current key. */
  kid: string;
  /** Keys that were current before and are not any more. */
  retired: string[];
  /** Keys deleted at once, when the rotation revoked them ("revoke now"): every key but the new one. */
  revoked: string[];
}

/**
 * The service's ES256 signing keys: created on first start, kept in the store (private parts
 * encrypted when configured), rotated on demand with a grace window. The only holder of private
 * signing keys in the server.
 */
export class SigningKeys {
  private keys: LoadedKey[] = [];
  private loadedAt = -Infinity;
  /** The reload under way, shared by every caller that finds the keys stale meanwhile. */
  private reloading: Promise<void> | undefined;
  private readonly refreshMs: number;
  /** `verificationKey` as the protocol's verifiers take it (their `keys` option). */
  readonly resolver: KeyResolver = (kid) => this.verificationKey(kid);

  constructor(private readonly repo: SigningKeysRepo, private readonly clock: Clock, private readonly opts: SigningKeysOptions) {
    this.refreshMs = opts.refreshMs ?? KEY_REFRESH_MS;
  }

  /** Creates the first key when there is none; encrypts stored keys once a secret is configured. */
  async init(): Promise<void> {
    const records = await this.repo.list();
    const encrypted = records.filter((r) => r.encrypted);
    if (encrypted.length > 0 && !this.opts.encryption) {
      throw new Error('signing keys in the database are encrypted: set KEY_ENCRYPTION_KEY to the secret they were stored with');
    }
    if (this.opts.encryption) {
      for (const r of records) {
        if (!r.encrypted) await this.repo.replacePrivate(r.kid, this.opts.encryption.encrypt(r.privateJwk), true);
        else this.opts.encryption.decrypt(r.privateJwk); // fails start early if the secret is wrong
      }
    }
    // Encrypting in place retires nothing, so the list read above still tells whether a key is current.
    if (!records.some((r) => r.retiredAt === null)) await this.createKey();
    await this.reloadAfterWrite();
  }

  /**
   * Makes a new key current. Normally the old ones stay published and verifiable for the grace
   * window. With `revokeNow` (the old private key leaked) every older key is deleted from the store
   * instead: this node stops publishing and accepting them at once, the other nodes at their next
   * reload (KEY_REFRESH_MS), and everything they signed stops verifying.
   */
  async rotate(opts: { revokeNow?: boolean } = {}): Promise<Rotated> {
    const before = (await this.repo.list()).filter((r) => r.retiredAt === null).map((r) => r.kid);
    const { kid, createdAt } = await this.createKey();
    await this.repo.retireAllExcept(kid, this.clock.now());
    const revoked = opts.revokeNow ? await this.repo.dropOlder(kid, createdAt) : [];
    await this.reloadAfterWrite();
    return { kid, retired: before, revoked };
  }

  async sign(payload: JWTPayload, typ: string): Promise<string> {
    return (await this.signer())(payload, typ);
  }

  /**
   * The current key, ready to sign: finding it and reading its private part (decrypting it) happen
   * here, so a caller that must not spend anything it cannot answer for (pass issuance) gets this
   * before it commits, and signing afterwards only computes.
   */
  async signer(): Promise<(payload: JWTPayload, typ: string) => Promise<string>> {
    const key = await this.current();
    key.signingKey ??= createPrivateKey({ key: this.privateJwk(key.record) as JsonWebKey, format: 'jwk' });
    const signingKey = key.signingKey;
    return async (payload, typ) => signEs256Jwt(signingKey, { kid: key.kid, typ }, payload);
  }

  /**
   * A compact JWS with the current key over a payload the caller has already encoded (base64url
   * bytes, in pieces joined in order), in pieces: the revocation list, too large to hand over as an
   * object or to copy in one go (revocation-jws.ts).
   */
  async signEncoded(typ: string, encodedPayload: readonly Uint8Array[]): Promise<Buffer[]> {
    const key = await this.current();
    key.signingKey ??= createPrivateKey({ key: this.privateJwk(key.record) as JsonWebKey, format: 'jwk' });
    return signEncodedPayload(key.signingKey, { kid: key.kid, typ }, encodedPayload);
  }

  /** The published key set: current keys and retired ones still inside their grace window. */
  async jwks(): Promise<{ keys: JWK[] }> {
    await this.refreshIfStale();
    return { keys: this.published().map((k) => ({ ...k.publicJwk, kid: k.kid, alg: 'ES256', use: 'sig' })) };
  }

  /** The public key for `kid` if it is published; re-reads the store once for a kid it does not know. */
  async verificationKey(kid: string): Promise<CryptoKey | undefined> {
    await this.refreshIfStale();
    let key = this.published().find((k) => k.kid === kid);
    if (!key && this.clock.now() - this.loadedAt > 1000) {
      await this.reload();
      key = this.published().find((k) => k.kid === kid);
    }
    if (!key) return undefined;
    key.publicKey ??= (await importJWK(key.publicJwk, 'ES256')) as CryptoKey;
    return key.publicKey;
  }

  private published(): LoadedKey[] {
    const cutoff = this.clock.now() - this.opts.graceSec * 1000;
    return this.keys.filter((k) => k.record.retiredAt === null || k.record.retiredAt > cutoff);
  }

  private async current(): Promise<LoadedKey> {
    await this.refreshIfStale();
    const active = this.keys.find((k) => k.record.retiredAt === null);
    if (active) return active;
    await this.reload();
    const again = this.keys.find((k) => k.record.retiredAt === null);
    if (!again) throw new Error('no active signing key');
    return again;
  }

  private async refreshIfStale(): Promise<void> {
    if (this.clock.now() - this.loadedAt >= this.refreshMs || this.keys.length === 0) await this.reload();
  }

  /** Re-reads the key table; callers that come while a read is under way share it. */
  private reload(): Promise<void> {
    this.reloading ??= this.read().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  /** A read that starts after this call: for the node's own writes (a read under way may have missed them). */
  private async reloadAfterWrite(): Promise<void> {
    await this.reloading?.catch(() => undefined);
    await this.reload();
  }

  private async read(): Promise<void> {
    const records = await this.repo.list(); // newest first
    const old = new Map(this.keys.map((k) => [k.kid, k]));
    this.keys = records.map((record) => {
      const prev = old.get(record.kid);
      return { kid: record.kid, publicJwk: record.publicJwk as JWK, record, signingKey: prev?.signingKey, publicKey: prev?.publicKey };
    });
    this.loadedAt = this.clock.now();
  }

  private privateJwk(record: SigningKeyRecord): JWK {
    const json = record.encrypted ? this.decrypt(record.privateJwk) : record.privateJwk;
    return JSON.parse(json) as JWK;
  }

  private decrypt(value: string): string {
    if (!this.opts.encryption) throw new Error('KEY_ENCRYPTION_KEY is required to use encrypted signing keys');
    return this.opts.encryption.decrypt(value);
  }

  private async createKey(): Promise<{ kid: string; createdAt: number }> {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const privateJson = JSON.stringify(await exportJWK(privateKey));
    const enc = this.opts.encryption;
    const createdAt = this.clock.now();
    await this.repo.create({
      kid,
      publicJwk: { kty: publicJwk.kty, crv: publicJwk.crv, x: publicJwk.x, y: publicJwk.y },
      privateJwk: enc ? enc.encrypt(privateJson) : privateJson,
      encrypted: enc !== null,
      createdAt,
      retiredAt: null,
    });
    return { kid, createdAt };
  }
}
