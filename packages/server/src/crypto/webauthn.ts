import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { cose, decodeCredentialPublicKey } from '@simplewebauthn/server/helpers';
import type { CredentialKey } from '@mandate/protocol';

/**
 * The only importer of @simplewebauthn/server. Stateless: every expected value (RP id, origin,
 * challenge, stored credential) is passed in, and results come back for the caller to store.
 * User verification is required everywhere: a passkey here stands for "the owner, in person".
 */

export type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON };
export type AssertionJSON = AuthenticationResponseJSON;

export interface RelyingParty {
  /** Host of the public base URL (no scheme, no port). */
  id: string;
  /** Origin of the public base URL: what the browser writes into clientDataJSON. */
  origin: string;
  name: string;
}

/** ES256 and RS256: what platform authenticators and security keys actually produce. */
export const ALGORITHMS = [-7, -257];
/** The browser prompt lives as long as the challenge (5 minutes). */
export const CEREMONY_TIMEOUT_MS = 5 * 60 * 1000;

export interface CredentialRef {
  id: string;
  transports: string[];
}

/** A stored credential, as the verifier needs it. */
export interface StoredCredential extends CredentialRef {
  /** COSE public key, base64url. */
  publicKey: string;
  counter: number;
}

export interface NewCredential {
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
}

export type Verified<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Our challenges are base64url strings; handing the library their bytes keeps `options.challenge` equal to ours. */
const challengeBytes = (challenge: string): Uint8Array<ArrayBuffer> => new Uint8Array(Buffer.from(challenge, 'base64url'));

export function registrationOptions(input: {
  rp: RelyingParty;
  challenge: string;
  user: { id: string; name: string; displayName: string };
  exclude: CredentialRef[];
}): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: input.rp.name,
    rpID: input.rp.id,
    userName: input.user.name,
    // The user handle is our opaque account id: it carries no personal data and lets a
    // discoverable credential name its account at sign-in.
    userID: new Uint8Array(Buffer.from(input.user.id, 'utf8')),
    userDisplayName: input.user.displayName,
    challenge: challengeBytes(input.challenge),
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: input.exclude.map((c) => ({ id: c.id, transports: c.transports })),
    // Discoverable ("resident") credentials are required: passkey sign-in sends no allowCredentials,
    // so a credential the authenticator cannot find by itself would be useless for signing in.
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    supportedAlgorithmIDs: ALGORITHMS,
  });
}

export function authenticationOptions(input: {
  rp: RelyingParty;
  challenge: string;
  /** Absent: the authenticator offers its discoverable credentials (nothing reveals an account). */
  allow?: CredentialRef[];
}): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: input.rp.id,
    challenge: challengeBytes(input.challenge),
    timeout: CEREMONY_TIMEOUT_MS,
    userVerification: 'required',
    allowCredentials: input.allow?.map((c) => ({ id: c.id, transports: c.transports })),
  });
}

/** What both ceremonies must show: our challenge, our origin, our RP id, and a verified user. */
function expectedCeremony(rp: RelyingParty, challenge: string) {
  return { expectedChallenge: challenge, expectedOrigin: rp.origin, expectedRPID: rp.id, requireUserVerification: true };
}

export async function verifyRegistration(input: {
  rp: RelyingParty;
  challenge: string;
  response: unknown;
}): Promise<Verified<NewCredential>> {
  if (!isRegistrationResponse(input.response)) return { ok: false, reason: 'attestation is not a WebAuthn registration response' };
  try {
    const result = await verifyRegistrationResponse({
      response: input.response,
      ...expectedCeremony(input.rp, input.challenge),
      requireUserPresence: true,
      supportedAlgorithmIDs: ALGORITHMS,
    });
    if (!result.verified) return { ok: false, reason: 'attestation could not be verified' };
    const { credential, userVerified } = result.registrationInfo;
    if (!userVerified) return { ok: false, reason: 'user verification is required' };
    return {
      ok: true,
      value: {
        credentialId: credential.id,
        publicKey: Buffer.from(credential.publicKey).toString('base64url'),
        counter: credential.counter,
        transports: cleanTransports(input.response.response.transports),
      },
    };
  } catch (e) {
    return { ok: false, reason: e instanceof Error ? e.message : 'attestation could not be verified' };
  }
}

/** Checks an assertion against the stored credential; the caller checks and advances the counter. */
export async function verifyAuthentication(input: {
  rp: RelyingParty;
  challenge: string;
  credential: StoredCredential;
  response: AuthenticationResponseJSON;
}): Promise<Verified<{ newCounter: number }>> {
  try {
    const result = await verifyAuthenticationResponse({
      response: input.response,
      ...expectedCeremony(input.rp, input.challenge),
      expectedType: 'webauthn.get',
      credential: {
        id: input.credential.id,
        publicKey: new Uint8Array(Buffer.from(input.credential.publicKey, 'base64url')),
        counter: input.credential.counter,
        transports: input.credential.transports,
      },
    });
    if (!result.verified || !result.authenticationInfo.userVerified) return { ok: false, reason: 'assertion could not be verified' };
    return { ok: true, value: { newCounter: result.authenticationInfo.newCounter } };
  } catch (e) {
    return { ok: false, reason: e instanceof Error ? e.message : 'assertion could not be verified' };
  }
}

/** The challenge an assertion claims to answer (from its clientDataJSON), before anything is verified. */
export function claimedChallenge(response: AuthenticationResponseJSON): string | undefined {
  try {
    const data: unknown = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8'));
    const challenge = isObject(data) ? data.challenge : undefined;
    return typeof challenge === 'string' && challenge.length <= 200 ? challenge : undefined;
  } catch {
    return undefined;
  }
}

/** The account id an assertion's user handle names, when the authenticator sent one. */
export function userHandle(response: AuthenticationResponseJSON): string | undefined {
  const handle = response.response.userHandle;
  return handle ? Buffer.from(handle, 'base64url').toString('utf8') : undefined;
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const isB64u = (x: unknown, max: number): x is string => typeof x === 'string' && x.length > 0 && x.length <= max && /^[A-Za-z0-9_-]+={0,2}$/.test(x);

/** Shape of a credential as @simplewebauthn/browser sends it; anything else is refused before parsing. */
function isCredentialJson(x: unknown): x is { id: string; rawId: string; type: string; response: Record<string, unknown> } {
  return isObject(x) && isB64u(x.id, 1400) && isB64u(x.rawId, 1400) && x.type === 'public-key' && isObject(x.response) &&
    isB64u(x.response.clientDataJSON, 8192);
}

export function isRegistrationResponse(x: unknown): x is RegistrationResponseJSON {
  return isCredentialJson(x) && isB64u(x.response.attestationObject, 32768) &&
    (x.response.transports === undefined || Array.isArray(x.response.transports));
}

export function isAuthenticationResponse(x: unknown): x is AuthenticationResponseJSON {
  if (!isCredentialJson(x)) return false;
  const r = x.response;
  return isB64u(r.authenticatorData, 8192) && isB64u(r.signature, 2048) &&
    (r.userHandle === undefined || r.userHandle === null || r.userHandle === '' || isB64u(r.userHandle, 128));
}

const TRANSPORTS = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);

function cleanTransports(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return [...new Set(list.filter((t): t is string => typeof t === 'string' && TRANSPORTS.has(t)))];
}

/**
 * A stored passkey's public key (COSE, base64url) as the JWK a receipt carries (decisions §29), its
 * algorithm pinned in `alg`; null for a key of a kind receipts do not describe.
 */
export function credentialKeyJwk(publicKey: string): CredentialKey | null {
  try {
    const key = decodeCredentialPublicKey(new Uint8Array(Buffer.from(publicKey, 'base64url')));
    const b64 = (bytes: Uint8Array | undefined): string | undefined => (bytes ? Buffer.from(bytes).toString('base64url') : undefined);
    const alg = key.get(cose.COSEKEYS.alg);
    if (cose.isCOSEPublicKeyEC2(key) && alg === cose.COSEALG.ES256 && key.get(cose.COSEKEYS.crv) === cose.COSECRV.P256) {
      const x = b64(key.get(cose.COSEKEYS.x));
      const y = b64(key.get(cose.COSEKEYS.y));
      return x && y ? { kty: 'EC', crv: 'P-256', x, y, alg: 'ES256' } : null;
    }
    if (cose.isCOSEPublicKeyRSA(key) && alg === cose.COSEALG.RS256) {
      const n = b64(key.get(cose.COSEKEYS.n));
      const e = b64(key.get(cose.COSEKEYS.e));
      return n && e ? { kty: 'RSA', n, e, alg: 'RS256' } : null;
    }
    if (cose.isCOSEPublicKeyOKP(key) && alg === cose.COSEALG.EdDSA && key.get(cose.COSEKEYS.crv) === cose.COSECRV.ED25519) {
      const x = b64(key.get(cose.COSEKEYS.x));
      return x ? { kty: 'OKP', crv: 'Ed25519', x, alg: 'EdDSA' } : null;
    }
    return null;
  } catch {
    return null;
  }
}
