import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CompactSign, exportJWK, generateKeyPair } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import type { EcP256PublicJwk, KeyResolver, PassClaims, StepupClaims, RevocationClaims, VerifyErrorCode } from '../src/index.ts';
import {
  ProtocolError,
  accessTokenHash,
  jwkThumbprint,
  parsePublicP256Jwk,
  signPass,
  signRevocationSnapshot,
  signStepupToken,
} from '../src/index.ts';

/** Fixed clock for every test: no sleeps, no Date.now(). */
export const NOW = 1_700_000_000;
export const ISSUER = 'https://mandate.example';
export const SITE = 'shop.example';
export const URL_ = 'https://shop.example/orders/42';
export const KID = 'k1';

export type Vectors = {
  rfc7638_rsa_key: JWK;
  rfc7638_thumbprint: string;
  rfc9449_ec_key: EcP256PublicJwk;
  rfc9449_jkt: string;
  rfc9449_token_request_proof: { jwt: string; htm: string; htu: string; iat: number; jti: string };
  rfc9449_token_request_proof_high_s_twin: { jwt: string };
  rfc9449_access_token: string;
  rfc9449_ath: string;
};

export const vectors = JSON.parse(
  readFileSync(new URL('./vectors/dpop.json', import.meta.url), 'utf8'),
) as Vectors;

export function b64json(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** Signs arbitrary header + payload; the header's alg must suit the key (jose checks that). */
export async function signRaw(header: Record<string, unknown>, payload: unknown, key: CryptoKey | Uint8Array): Promise<string> {
  const alg = header['alg'];
  assert.equal(typeof alg, 'string');
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ ...header, alg: String(alg) })
    .sign(key);
}

export type Agent = { privateKey: CryptoKey; publicJwk: EcP256PublicJwk; privateJwk: JWK; jkt: string };

export async function newAgent(): Promise<Agent> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = parsePublicP256Jwk(await exportJWK(publicKey));
  return { privateKey, publicJwk, privateJwk: await exportJWK(privateKey), jkt: await jwkThumbprint(publicJwk) };
}

export type Service = { privateKey: CryptoKey; publicKey: CryptoKey; publicJwk: JWK; resolver: KeyResolver; calls: string[] };

export async function newService(): Promise<Service> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const calls: string[] = [];
  const resolver: KeyResolver = async (kid) => {
    calls.push(kid);
    return kid === KID ? publicKey : undefined;
  };
  return { privateKey, publicKey, publicJwk: { ...(await exportJWK(publicKey)), kid: KID }, resolver, calls };
}

export function passClaims(agent: Agent, over: Partial<PassClaims> = {}): PassClaims {
  return {
    iss: ISSUER,
    sub: 'ag_0123456789abcdef01234567',
    aud: SITE,
    user: 'u_0123456789abcdef01234567',
    scope: ['orders:read'],
    cnf: { dpop: agent.jkt, jkt: agent.jkt },
    type: 'access',
    iat: NOW - 10,
    exp: NOW - 10 + 600,
    jti: 'pass-jti-1',
    grant: 'gr_0123456789abcdef01234567',
    rev_seq: 3,
    ...over,
  };
}

export function stepupClaims(agent: Agent, over: Partial<StepupClaims> = {}): StepupClaims {
  return {
    iss: ISSUER,
    sub: 'ag_0123456789abcdef01234567',
    aud: SITE,
    user: 'u_0123456789abcdef01234567',
    act: ['delete order 42'],
    type: 'stepup',
    jti: 'stepup-jti-1',
    iat: NOW - 5,
    exp: NOW + 55,
    cnf: { dpop: agent.jkt, jkt: agent.jkt },
    ...over,
  };
}

export function revocationClaims(over: Partial<RevocationClaims> = {}): RevocationClaims {
  return { type: 'revocation', iss: ISSUER, iat: NOW - 1, rev_seq: 7, revoked_agents: [], revoked_grants: [], ...over };
}

export function mintPass(s: Service, agent: Agent, over: Partial<PassClaims> = {}): Promise<string> {
  return signPass(s.privateKey, KID, passClaims(agent, over));
}
export function mintStepup(s: Service, agent: Agent, over: Partial<StepupClaims> = {}): Promise<string> {
  return signStepupToken(s.privateKey, KID, stepupClaims(agent, over));
}
export function mintRevocation(s: Service, over: Partial<RevocationClaims> = {}): Promise<string> {
  return signRevocationSnapshot(s.privateKey, KID, revocationClaims(over));
}

/** DPoP proof with fully controllable header and claims (createDpopProof normalises htu). */
export async function rawProof(
  agent: Agent,
  token: string,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  return signRaw(
    { typ: 'dpop+jwt', alg: 'ES256', jwk: agent.publicJwk, ...header },
    { htm: 'POST', htu: URL_, iat: NOW, jti: 'proof-jti-0001', ath: accessTokenHash(token), ...claims },
    agent.privateKey,
  );
}

/** Asserts the promise rejects with a ProtocolError of this code (and nothing else). */
export async function rejectsWith(p: Promise<unknown>, code: VerifyErrorCode): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof ProtocolError, `expected ProtocolError, got ${String(e)}`);
    assert.equal(e.code, code, `expected ${code}, got ${e.code}: ${e.message}`);
    return true;
  });
}

/** Asserts the promise rejects with some ProtocolError. */
export async function rejectsProtocol(p: Promise<unknown>): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof ProtocolError, `expected ProtocolError, got ${e instanceof Error ? e.stack : String(e)}`);
    return true;
  });
}

/** The ECDSA malleability twin of a P-256 JWS: (r, s) -> (r, n - s), also a valid signature. */
export function highSTwin(jws: string): string {
  const [h, p, sig] = jws.split('.');
  assert.ok(h !== undefined && p !== undefined && sig !== undefined);
  const raw = Buffer.from(sig, 'base64url');
  assert.equal(raw.length, 64);
  const n = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
  const s = BigInt(`0x${raw.subarray(32).toString('hex')}`);
  const twinS = Buffer.from((n - s).toString(16).padStart(64, '0'), 'hex');
  return `${h}.${p}.${Buffer.concat([raw.subarray(0, 32), twinS]).toString('base64url')}`;
}
