/**
 * Web Bot Auth (IETF drafts draft-meunier-web-bot-auth-architecture and
 * draft-meunier-http-message-signatures-directory; decisions §22): HTTP Message Signatures
 * (RFC 9421) with Ed25519 keys published in a key directory. Only what the service and the agent
 * SDK need: the directory body, its response signature, request signatures and their checks.
 * Structured fields (RFC 8941) are parsed and serialized by `structured-headers`, so that the
 * signature base is rebuilt from the parsed header, never copied from its raw text.
 */
import { type KeyObject, createHash, createPublicKey, randomBytes, sign as nodeSign, verify as nodeVerify } from 'node:crypto';
import {
  type BareItem,
  type InnerList,
  type Item,
  type Parameters,
  parseDictionary,
  parseItem,
  serializeInnerList,
  serializeItem,
  serializeParameters,
  serializeString,
} from 'structured-headers';
import { JwkError } from './jwk.ts';
import { isObject } from './shape.ts';

export const WBA_REQUEST_TAG = 'web-bot-auth';
export const WBA_DIRECTORY_TAG = 'http-message-signatures-directory';
export const WBA_DIRECTORY_MEDIA_TYPE = 'application/http-message-signatures-directory+json';
export const WBA_DIRECTORY_PATH = '/.well-known/http-message-signatures-directory';
/** The longest a directory signature may live (expires − created), decisions §22. */
export const WBA_DIRECTORY_MAX_LIFETIME_SEC = 3600;

export type Ed25519PublicJwk = { kty: 'OKP'; crv: 'Ed25519'; x: string };

const X = /^[A-Za-z0-9_-]{43}$/;

/**
 * Validates an untrusted Ed25519 JWK and returns only its public members. Refuses private keys
 * (`d`), other key types and curves, and an `x` that is not the canonical base64url of 32 bytes
 * (a second spelling would give the same key a second thumbprint).
 */
export function parseEd25519PublicJwk(value: unknown): Ed25519PublicJwk {
  if (!isObject(value)) throw new JwkError('the key must be a JWK object');
  if ('d' in value) throw new JwkError('the key contains its private part (d); send only the public key');
  if (value['kty'] !== 'OKP') throw new JwkError('the key must have kty OKP');
  if (value['crv'] !== 'Ed25519') throw new JwkError('the key must be on curve Ed25519');
  const x = value['x'];
  if (typeof x !== 'string' || !X.test(x) || Buffer.from(x, 'base64url').toString('base64url') !== x) {
    throw new JwkError('the key x must be the base64url (no padding) of 32 bytes');
  }
  const jwk: Ed25519PublicJwk = { kty: 'OKP', crv: 'Ed25519', x };
  try {
    createPublicKey({ key: jwk, format: 'jwk' });
  } catch {
    throw new JwkError('the key is not a valid Ed25519 public key');
  }
  return jwk;
}

/** RFC 7638 thumbprint (SHA-256, base64url): the members crv, kty, x in that order. */
export function ed25519Thumbprint(jwk: Ed25519PublicJwk): string {
  const canonical = `{"crv":"Ed25519","kty":"OKP","x":${JSON.stringify(jwk.x)}}`;
  return createHash('sha256').update(canonical).digest('base64url');
}

/** The exact directory body for `keys` (the bytes the directory signature's digest covers). */
export function directoryBody(keys: readonly Ed25519PublicJwk[]): string {
  return JSON.stringify({ keys: keys.map((k) => ({ kty: 'OKP', crv: 'Ed25519', kid: ed25519Thumbprint(k), x: k.x, use: 'sig' })) });
}

/** `Content-Digest` (RFC 9530) of `body` with SHA-256. */
export function contentDigest(body: string | Uint8Array): string {
  return `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
}

/** Whether a `Content-Digest` header holds a sha-256 (or sha-512) digest of `body` that matches; others are ignored. */
export function contentDigestMatches(header: string, body: string | Uint8Array): boolean {
  let dict: ReturnType<typeof parseDictionary>;
  try {
    dict = parseDictionary(header);
  } catch {
    return false;
  }
  let checked = false;
  for (const [alg, value] of dict) {
    if (alg !== 'sha-256' && alg !== 'sha-512') continue;
    const bytes = value[0];
    if (!(bytes instanceof ArrayBuffer)) return false;
    const want = createHash(alg === 'sha-256' ? 'sha256' : 'sha512').update(body).digest();
    if (!Buffer.from(bytes).equals(want)) return false;
    checked = true;
  }
  return checked;
}

/** Thrown when a signature's headers cannot be read; the message says why. */
export class HttpSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HttpSignatureError';
  }
}

/**
 * A covered component's parameters (RFC 9421 §2.1), RFC 8941 parameters as parsed. Typed without the
 * parser's own types so that the published .d.ts files do not import `structured-headers`, whose types
 * need the DOM library (a Node project that checks its libraries would fail on them).
 */
export type ComponentParams = ReadonlyMap<string, unknown>;

export interface CoveredComponent {
  /** Lower-case component name: `@authority`, `signature-agent` ... */
  name: string;
  params: ComponentParams;
}

export interface SignatureParams {
  created?: number;
  expires?: number;
  keyid?: string;
  alg?: string;
  nonce?: string;
  tag?: string;
}

/** One labelled signature from `Signature-Input` and `Signature`. */
export interface HttpSignature {
  label: string;
  components: CoveredComponent[];
  params: SignatureParams;
  /** `@signature-params`: the inner list serialized again from what was parsed. */
  paramsValue: string;
  signature: Uint8Array;
}

function readParams(p: Parameters): SignatureParams {
  const out: SignatureParams = {};
  for (const name of ['created', 'expires'] as const) {
    const v = p.get(name);
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new HttpSignatureError(`the signature parameter ${name} must be an integer`);
    out[name] = v;
  }
  for (const name of ['keyid', 'alg', 'nonce', 'tag'] as const) {
    const v = p.get(name);
    if (v === undefined) continue;
    if (typeof v !== 'string') throw new HttpSignatureError(`the signature parameter ${name} must be a string`);
    out[name] = v;
  }
  return out;
}

/** Every signature present in both `Signature-Input` and `Signature`, in header order. */
export function readSignatures(signatureInput: string, signature: string): HttpSignature[] {
  let inputs: ReturnType<typeof parseDictionary>;
  let values: ReturnType<typeof parseDictionary>;
  try {
    inputs = parseDictionary(signatureInput);
  } catch {
    throw new HttpSignatureError('Signature-Input is not a structured-field dictionary');
  }
  try {
    values = parseDictionary(signature);
  } catch {
    throw new HttpSignatureError('Signature is not a structured-field dictionary');
  }
  const out: HttpSignature[] = [];
  for (const [label, member] of inputs) {
    const sig = values.get(label);
    if (sig === undefined) continue;
    if (!Array.isArray(member[0])) throw new HttpSignatureError(`Signature-Input ${label} must be an inner list of components`);
    if (!(sig[0] instanceof ArrayBuffer)) throw new HttpSignatureError(`Signature ${label} must be a byte sequence`);
    const list = member as InnerList;
    const components = list[0].map(([name, params]) => {
      if (typeof name !== 'string') throw new HttpSignatureError(`Signature-Input ${label} lists a component that is not a string`);
      return { name, params };
    });
    let paramsValue: string;
    try {
      paramsValue = serializeInnerList(list);
    } catch {
      // Parsed but not serializable again (a value RFC 8941 reads but RFC 9421 cannot sign).
      throw new HttpSignatureError(`Signature-Input ${label} cannot be serialized again`);
    }
    out.push({ label, components, params: readParams(list[1]), paramsValue, signature: new Uint8Array(sig[0]) });
  }
  if (out.length === 0) throw new HttpSignatureError('Signature-Input and Signature share no label');
  return out;
}

/** The component identifier as it appears in the signature base (`"@authority";req`). */
export function componentId(c: CoveredComponent): string {
  // Only this module makes components: from parsed fields or its own literals, so they are Parameters.
  return `${serializeString(c.name)}${serializeParameters(c.params as Parameters)}`;
}

/**
 * The signature base (RFC 9421 §2.5). `valueOf` answers a component's value, or undefined when
 * the message has none (the signature then cannot be checked: HttpSignatureError).
 */
export function signatureBase(sig: Pick<HttpSignature, 'components' | 'paramsValue'>, valueOf: (c: CoveredComponent) => string | undefined): string {
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const c of sig.components) {
    const id = componentId(c);
    if (seen.has(id)) throw new HttpSignatureError(`the component ${id} is listed twice`);
    seen.add(id);
    const value = valueOf(c);
    if (value === undefined || /[\r\n]/.test(value)) throw new HttpSignatureError(`the signed component ${id} is missing from the message`);
    lines.push(`${id}: ${value}`);
  }
  lines.push(`"@signature-params": ${sig.paramsValue}`);
  return lines.join('\n');
}

export function verifyEd25519(base: string, signature: Uint8Array, jwk: Ed25519PublicJwk): boolean {
  if (signature.length !== 64) return false;
  try {
    return nodeVerify(null, Buffer.from(base), createPublicKey({ key: jwk, format: 'jwk' }), signature);
  } catch {
    return false;
  }
}

/**
 * The value of a header field as a covered component: obs-fold and surrounding spaces removed,
 * repeated fields joined with ", " (RFC 9421 §2.1). With `key`, the dictionary member serialized.
 */
export function fieldComponentValue(raw: string, params: ComponentParams): string | undefined {
  const value = raw.trim().replace(/\s*\r?\n\s*/g, ' ');
  if (params.size === 0) return value;
  const key = params.get('key');
  if (params.size !== 1 || typeof key !== 'string') return undefined;
  try {
    const member = parseDictionary(value).get(key);
    if (member === undefined || Array.isArray(member[0])) return undefined;
    return serializeItem(member as Item);
  } catch {
    return undefined;
  }
}

/**
 * The agent's address from `Signature-Agent`, read in both forms the drafts have used: one quoted
 * string (`"https://..."`), or a dictionary whose member named like the signature's `label` is one
 * (`sig1="https://..."`). Undefined when absent or unreadable.
 */
export function readSignatureAgent(raw: string | undefined, label: string): string | undefined {
  if (raw === undefined) return undefined;
  const value = raw.trim();
  if (value.startsWith('"')) {
    try {
      const [item] = parseItem(value);
      return typeof item === 'string' ? item : undefined;
    } catch {
      return undefined;
    }
  }
  try {
    const member = parseDictionary(value).get(label);
    return member !== undefined && typeof member[0] === 'string' ? member[0] : undefined;
  } catch {
    return undefined;
  }
}

/** A private Ed25519 key and its public JWK's thumbprint (the `keyid`). */
export interface WbaSigningKey {
  privateKey: KeyObject;
  keyid: string;
}

function sign(components: CoveredComponent[], params: Parameters, values: string[], key: WbaSigningKey, label: string): { 'Signature-Input': string; Signature: string } {
  const list: InnerList = [components.map((c) => [c.name, c.params as Parameters] as Item), params];
  const paramsValue = serializeInnerList(list);
  const base = signatureBase({ components, paramsValue }, (c) => values[components.indexOf(c)]);
  const signature = nodeSign(null, Buffer.from(base), key.privateKey);
  const bytes = signature.buffer.slice(signature.byteOffset, signature.byteOffset + signature.byteLength) as ArrayBuffer;
  return { 'Signature-Input': `${label}=${paramsValue}`, Signature: `${label}=${serializeItem(bytes)}` };
}

function signatureParams(key: WbaSigningKey, created: number, expires: number, tag: string, nonce?: string): Parameters {
  const p = new Map<string, BareItem>([
    ['created', created],
    ['expires', expires],
    ['keyid', key.keyid],
    ['alg', 'ed25519'],
  ]);
  if (nonce !== undefined) p.set('nonce', nonce);
  p.set('tag', tag);
  return p;
}

export interface DirectorySignatureInput {
  /** The directory's host (and port when not the default): `@authority`;req. */
  authority: string;
  body: string;
  key: WbaSigningKey;
  /** Epoch seconds. */
  created: number;
  /** Seconds, at most WBA_DIRECTORY_MAX_LIFETIME_SEC. */
  lifetimeSec: number;
}

/** The directory response's headers: its digest and a signature covering `@authority`;req and `content-digest`. */
export function signDirectory(input: DirectorySignatureInput): { 'Content-Digest': string; 'Signature-Input': string; Signature: string } {
  const digest = contentDigest(input.body);
  const components: CoveredComponent[] = [
    { name: '@authority', params: new Map([['req', true]]) },
    { name: 'content-digest', params: new Map() },
  ];
  const params = signatureParams(input.key, input.created, input.created + input.lifetimeSec, WBA_DIRECTORY_TAG);
  return { 'Content-Digest': digest, ...sign(components, params, [input.authority, digest], input.key, 'binding0') };
}

export interface RequestSignatureInput {
  /** The request's host (and port when not the default). */
  authority: string;
  /** The agent's directory address, sent as `Signature-Agent: "<address>"`. */
  signatureAgent: string;
  key: WbaSigningKey;
  created: number;
  lifetimeSec: number;
  /** 64 random bytes, base64, when not given (the length Cloudflare's verifier expects). */
  nonce?: string;
}

/**
 * The three headers of a signed agent request (tag `web-bot-auth`, covering `@authority` and
 * `signature-agent`). `Signature-Agent` is the quoted-string form, the one every published
 * verifier reads; the whole field is covered.
 */
export function signRequest(input: RequestSignatureInput): { 'Signature-Agent': string; 'Signature-Input': string; Signature: string } {
  const agent = serializeString(input.signatureAgent);
  const components: CoveredComponent[] = [
    { name: '@authority', params: new Map() },
    { name: 'signature-agent', params: new Map() },
  ];
  const nonce = input.nonce ?? randomBytes(64).toString('base64');
  const params = signatureParams(input.key, input.created, input.created + input.lifetimeSec, WBA_REQUEST_TAG, nonce);
  return { 'Signature-Agent': agent, ...sign(components, params, [input.authority, agent], input.key, 'sig1') };
}

/** `@authority` of a URL: lower-case host, with the port only when it is not the scheme's default. */
export function authorityOf(url: URL): string {
  return url.host.toLowerCase();
}
