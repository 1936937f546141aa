import { createHash, createSign, generateKeyPairSync, randomBytes, type JsonWebKey, type KeyObject } from 'node:crypto';

/**
 * A software WebAuthn authenticator for integration tests that run without a browser: it answers
 * registration and authentication options with the same JSON @simplewebauthn/browser produces
 * ("none" attestation, ES256, user present + verified), so that registration, sign-in, counters and
 * approvals run through the real verifier. Each ceremony may set or spoil a part of it (`Ceremony`)
 * for the attack tests. The Chromium end-to-end test covers the real browser path.
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

/** Authenticator data flags (WebAuthn §6.1): user present, user verified, attested credential data. */
export const UP = 0x01;
export const UV = 0x04;
export const AT = 0x40;

/** What a test may set, or spoil, in one ceremony. */
export interface Ceremony {
  /** Signs this challenge instead of the one in the options. */
  challenge?: string;
  origin?: string;
  rpId?: string;
  /** Authenticator data flags: UP | UV by default (plus AT on registration). */
  flags?: number;
  /** The sign count to report (assertions); later ones count on from it. */
  counter?: number;
  /** The user handle to send, as text (sent base64url-encoded); by default the one registered, if any. */
  userHandle?: string;
}

/** Ceremony options as the server hands them out, or just their challenge. */
type Options = string | { challenge: string; user?: { id?: string }; allowCredentials?: { id: string }[] };

/** The JSON @simplewebauthn/browser hands the page for a ceremony. */
export type Credential<Response> = {
  id: string;
  rawId: string;
  type: 'public-key';
  response: Response;
  clientExtensionResults: Record<string, never>;
  authenticatorAttachment: 'platform';
};
export type Attestation = Credential<{ clientDataJSON: string; attestationObject: string; transports: string[] }>;
export type Assertion = Credential<{ clientDataJSON: string; authenticatorData: string; signature: string; userHandle?: string }>;

export class SoftAuthenticator {
  /** One credential (and key pair) per authenticator: registering again attests the same one. */
  readonly credentialId = randomBytes(16);
  private readonly privateKey: KeyObject;
  private readonly publicJwk: JsonWebKey;
  /** The user handle of the last registration whose options named a user (already base64url). */
  private userHandle = '';
  counter = 0;
  readonly origin: string;
  readonly rpId: string;
  /** false: an authenticator without a signature counter, which always reports 0. */
  readonly signCount: boolean;

  constructor(opts: { origin?: string; rpId?: string; signCount?: boolean } = {}) {
    this.origin = opts.origin ?? 'http://localhost:8080';
    this.rpId = opts.rpId ?? new URL(this.origin).hostname;
    this.signCount = opts.signCount ?? true;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    this.publicJwk = publicKey.export({ format: 'jwk' });
  }

  /** The credential id, base64url. */
  get id(): string {
    return b64u(this.credentialId);
  }

  private clientData(type: string, options: Options, c: Ceremony): Buffer {
    const challenge = c.challenge ?? (typeof options === 'string' ? options : options.challenge);
    return Buffer.from(JSON.stringify({ type, challenge, origin: c.origin ?? this.origin, crossOrigin: false }));
  }

  private credential<Response>(response: Response): Credential<Response> {
    return { id: this.id, rawId: this.id, type: 'public-key', response, clientExtensionResults: {}, authenticatorAttachment: 'platform' };
  }

  private authData(flags: number, counter: number, rpId: string, extra: Buffer = Buffer.alloc(0)): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, extra]);
  }

  /** Answers `options` of GET /api/webauthn/register/options ("none" attestation). */
  register(options: Options, c: Ceremony = {}): Attestation {
    if (typeof options !== 'string' && options.user?.id) this.userHandle = options.user.id;
    const cose = new Map<Cbor, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(this.publicJwk.x ?? '', 'base64url')], [-3, Buffer.from(this.publicJwk.y ?? '', 'base64url')]]);
    const attested = Buffer.concat([Buffer.alloc(16) /* AAGUID */, Buffer.from([0, this.credentialId.length]), this.credentialId, cbor(cose)]);
    const authData = this.authData(c.flags ?? UP | UV | AT, this.counter, c.rpId ?? this.rpId, attested);
    const attestationObject = cbor(new Map<Cbor, Cbor>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]));
    return this.credential({ clientDataJSON: b64u(this.clientData('webauthn.create', options, c)), attestationObject: b64u(attestationObject), transports: ['internal'] });
  }

  /** Answers authentication `options`; refuses options whose `allowCredentials` leave this credential out. */
  assert(options: Options, c: Ceremony = {}): Assertion {
    const allowed = typeof options === 'string' ? [] : (options.allowCredentials?.map((a) => a.id) ?? []);
    if (allowed.length > 0 && !allowed.includes(this.id)) throw new Error('soft authenticator: its credential is not allowed by these options');
    this.counter = c.counter ?? (this.signCount ? this.counter + 1 : this.counter);
    const authenticatorData = this.authData(c.flags ?? UP | UV, this.counter, c.rpId ?? this.rpId);
    const clientDataJSON = this.clientData('webauthn.get', options, c);
    const signer = createSign('sha256');
    signer.update(Buffer.concat([authenticatorData, sha256(clientDataJSON)]));
    const userHandle = c.userHandle !== undefined ? b64u(Buffer.from(c.userHandle)) : this.userHandle;
    return this.credential({
      clientDataJSON: b64u(clientDataJSON),
      authenticatorData: b64u(authenticatorData),
      signature: b64u(signer.sign(this.privateKey)),
      ...(userHandle ? { userHandle } : {}),
    });
  }
}
