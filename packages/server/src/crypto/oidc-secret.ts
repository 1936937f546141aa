/**
 * The OIDC provider's server secret (decisions §1, §18): generated once, kept in the store like the
 * VAPID keys (AES-256-GCM under KEY_ENCRYPTION_KEY when it is set), the same on every node. From it:
 * - pairwise identifiers: HMAC-SHA256 over (client site, id), base64url; stable at one site,
 *   different at every other;
 * - sealed blobs (authorization codes, the `k` of a wait address): AES-256-GCM with a label as
 *   additional data, so a blob made for one purpose never opens as another.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { ServiceSecretsRepo } from '../store/ports/index.ts';
import type { KeyEncryption } from './key-encryption.ts';

const SECRET_NAME = 'oidc';

export class OidcSecret {
  private readonly pairwiseKey: Buffer;
  private readonly sealKey: Buffer;

  constructor(secret: Buffer) {
    this.pairwiseKey = createHmac('sha256', secret).update('pairwise').digest();
    this.sealKey = createHmac('sha256', secret).update('seal').digest();
  }

  /** The pairwise identifier of `id` at `site` (the redirect URI's host): base64url of HMAC-SHA256. */
  pairwise(site: string, id: string): string {
    return createHmac('sha256', this.pairwiseKey).update(`${site.length}:${site}|${id}`).digest('base64url');
  }

  /** A short derived identifier (a sign-in's sid from a code's id). */
  derive(label: string, value: string): string {
    return createHmac('sha256', this.pairwiseKey).update(`${label}|${value}`).digest('base64url').slice(0, 32);
  }

  /** AES-256-GCM of the JSON of `value`; `label` binds the blob to its purpose. */
  seal(label: string, value: unknown): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.sealKey, iv);
    c.setAAD(Buffer.from(label));
    const body = Buffer.concat([c.update(JSON.stringify(value), 'utf8'), c.final()]);
    return Buffer.concat([iv, body, c.getAuthTag()]).toString('base64url');
  }

  /**
   * The value sealed under `label`, or undefined for anything else (tampered, another label, junk).
   * Up to 40,000 characters: a browser's authorization (decisions §28) seals up to six parameters of
   * 2048 characters each (client_id, redirect_uri, resource, state, nonce, scope), and its code five.
   */
  open(label: string, blob: string): unknown {
    if (blob.length < 40 || blob.length > SEALED_MAX || !/^[A-Za-z0-9_-]+$/.test(blob)) return undefined;
    try {
      const raw = Buffer.from(blob, 'base64url');
      const d = createDecipheriv('aes-256-gcm', this.sealKey, raw.subarray(0, 12));
      d.setAAD(Buffer.from(label));
      d.setAuthTag(raw.subarray(raw.length - 16));
      const text = Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]).toString('utf8');
      return JSON.parse(text) as unknown;
    } catch {
      return undefined;
    }
  }
}

const SEALED_MAX = 40_000;

/** Reads the secret, creating it on the first start (the first writer wins when nodes race). */
export async function loadOidcSecret(repo: ServiceSecretsRepo, encryption: KeyEncryption | null, clock: Clock): Promise<OidcSecret> {
  let stored = await repo.get(SECRET_NAME);
  if (!stored) {
    const value = randomBytes(32).toString('base64url');
    stored = await repo.putIfAbsent({ name: SECRET_NAME, value: encryption ? encryption.encrypt(value) : value, encrypted: encryption !== null, createdAt: clock.now() });
  }
  if (stored.encrypted && !encryption) throw new Error('the OIDC secret in the database is encrypted: set KEY_ENCRYPTION_KEY to the secret it was stored with');
  const value = stored.encrypted && encryption ? encryption.decrypt(stored.value) : stored.value;
  if (!stored.encrypted && encryption) await repo.replace(SECRET_NAME, encryption.encrypt(value), true);
  const secret = Buffer.from(value, 'base64url');
  if (secret.length !== 32) throw new Error('the OIDC secret in the database is damaged');
  return new OidcSecret(secret);
}
