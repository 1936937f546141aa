import { createHash, createSign, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';

/**
 * A software WebAuthn authenticator for integration tests that run without a browser: it answers
 * registration and authentication options with the same JSON @simplewebauthn/browser produces
 * ("none" attestation, ES256, user present + verified). The Chromium end-to-end test covers the real
 * browser path; this one lets every approval test carry a genuine, verifiable passkey assertion.
 */

// Minimal CBOR (RFC 8949) encoder: unsigned/negative ints, byte strings, text strings, maps.
function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 256) return Buffer.from([(major << 5) | 24, n]);
  if (n < 65536) return Buffer.from([(major << 5) | 25, n >> 8, n & 255]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}
type Cbor = number | string | Buffer | Map<Cbor, Cbor>;
function cbor(v: Cbor): Buffer {
  if (typeof v === 'number') return v >= 0 ? head(0, v) : head(1, -1 - v);
  if (typeof v === 'string') return Buffer.concat([head(3, Buffer.byteLength(v)), Buffer.from(v)]);
  if (Buffer.isBuffer(v)) return Buffer.concat([head(2, v.length), v]);
  const parts = [head(5, v.size)];
  for (const [k, val] of v) parts.push(cbor(k), cbor(val));
  return Buffer.concat(parts);
}

const b64u = (b: Buffer): string => b.toString('base64url');
const sha256 = (b: Buffer | string): Buffer => createHash('sha256').update(b).digest();

interface Credential {
  id: Buffer;
  privateKey: KeyObject;
  userHandle: string;
  counter: number;
}

export class SoftAuthenticator {
  private readonly credentials: Credential[] = [];

  constructor(readonly origin = 'http://localhost:8080', readonly rpId = new URL(origin).hostname) {}

  get credentialIds(): string[] {
    return this.credentials.map((c) => b64u(c.id));
  }

  /** Answers `options` of GET /api/webauthn/register/options. */
  register(options: { challenge: string; user?: { id?: string } }): Record<string, unknown> {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const id = randomBytes(16);
    const cred: Credential = { id, privateKey, userHandle: options.user?.id ?? '', counter: 0 };
    this.credentials.push(cred);
    const cose = new Map<Cbor, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x as string, 'base64url')], [-3, Buffer.from(jwk.y as string, 'base64url')]]);
    const authData = Buffer.concat([
      sha256(this.rpId),
      Buffer.from([0x45]), // UP | UV | AT
      Buffer.alloc(4),
      Buffer.alloc(16), // AAGUID
      Buffer.from([0, id.length]),
      id,
      cbor(cose),
    ]);
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin: this.origin, crossOrigin: false }));
    const attestationObject = cbor(new Map<Cbor, Cbor>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]));
    return {
      id: b64u(id),
      rawId: b64u(id),
      type: 'public-key',
      response: { clientDataJSON: b64u(clientDataJSON), attestationObject: b64u(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /**
   * Answers authentication `options` with the first credential it holds that the options allow
   * (any, when `allowCredentials` is empty). `tamper` lets attack tests spoil one part.
   */
  assert(
    options: { challenge: string; allowCredentials?: { id: string }[] },
    tamper: { origin?: string; rpId?: string; counter?: number; userVerified?: boolean; challenge?: string } = {},
  ): Record<string, unknown> {
    const allowed = options.allowCredentials?.map((c) => c.id) ?? [];
    const cred = this.credentials.find((c) => allowed.length === 0 || allowed.includes(b64u(c.id)));
    if (!cred) throw new Error('soft authenticator: no credential allowed by these options');
    cred.counter = tamper.counter ?? cred.counter + 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(cred.counter);
    const authenticatorData = Buffer.concat([sha256(tamper.rpId ?? this.rpId), Buffer.from([tamper.userVerified === false ? 0x01 : 0x05]), counter]);
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: tamper.challenge ?? options.challenge, origin: tamper.origin ?? this.origin, crossOrigin: false }));
    const signer = createSign('sha256');
    signer.update(Buffer.concat([authenticatorData, sha256(clientDataJSON)]));
    const signature = signer.sign(cred.privateKey);
    return {
      id: b64u(cred.id),
      rawId: b64u(cred.id),
      type: 'public-key',
      response: { clientDataJSON: b64u(clientDataJSON), authenticatorData: b64u(authenticatorData), signature: b64u(signature), userHandle: cred.userHandle || undefined },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
