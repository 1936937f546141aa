import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';

const PREFIX = 'enc:v1';
// A fixed salt is fine: the input is a high-entropy operator secret, and a per-value IV is used.
const SALT = 'mandate/signing-key-encryption/v1';

/** AES-256-GCM with a key derived from KEY_ENCRYPTION_KEY: protects private signing keys at rest. */
export class KeyEncryption {
  private readonly key: Buffer;
  constructor(secret: string) {
    this.key = scryptSync(secret, SALT, 32);
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [PREFIX, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join(':');
  }

  /** Throws when the value was encrypted under another secret or altered. */
  decrypt(value: string): string {
    const parts = value.split(':');
    if (parts.length !== 5 || `${parts[0]}:${parts[1]}` !== PREFIX) throw new Error('not an encrypted key');
    const [, , iv, tag, body] = parts as [string, string, string, string, string];
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}
