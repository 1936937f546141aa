import { randomBytes } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import type { CryptoKey, KeyObject } from 'jose';
import { DPOP_TYP } from './claims.ts';
import { accessTokenHash } from './dpop.ts';
import { normalizeHtu } from './htu.ts';
import type { EcP256PublicJwk } from './jwk.ts';
import { parsePublicP256Jwk } from './jwk.ts';

/** Agent-side signing helpers, used by the SDKs and by server tests. */

export type PrivateKey = CryptoKey | KeyObject;

function nowSec(): number {
  return Math.floor(Date.now() / 1000);
}

/** 16 random bytes: 22 base64url characters, within the 8..128 jti range. */
function randomJti(): string {
  return randomBytes(16).toString('base64url');
}

export type DpopProofInput = {
  htm: string;
  /** The full request URL; query and fragment are dropped as RFC 9449 §4.2 asks. */
  htu: string;
  accessToken: string;
  iat?: number;
  jti?: string;
};

/**
 * Signs a DPoP proof for one request. `publicJwk` is re-validated so that a private JWK (with
 * `d`) can never end up in a header sent to every site.
 */
export async function createDpopProof(
  privateKey: PrivateKey,
  publicJwk: EcP256PublicJwk,
  input: DpopProofInput,
): Promise<string> {
  const jwk = parsePublicP256Jwk(publicJwk);
  return new SignJWT({
    jti: input.jti ?? randomJti(),
    htm: input.htm.toUpperCase(),
    htu: normalizeHtu(input.htu),
    iat: input.iat ?? nowSec(),
    ath: accessTokenHash(input.accessToken),
  })
    .setProtectedHeader({ typ: DPOP_TYP, alg: 'ES256', jwk })
    .sign(privateKey);
}

export type AgentJwtInput = {
  iat?: number;
  /** Defaults to iat + lifetimeSec. */
  exp?: number;
  /** Default 300; the service accepts at most 900. */
  lifetimeSec?: number;
  /** Optional one-time id and target URL (OIDC authorize, decisions.md §12). */
  jti?: string;
  htu?: string;
};

/** Signs an agent JWT: iss = sub = agentId, type `agent`, ES256. */
export async function createAgentJwt(
  privateKey: PrivateKey,
  agentId: string,
  input: AgentJwtInput = {},
): Promise<string> {
  const iat = input.iat ?? nowSec();
  const exp = input.exp ?? iat + (input.lifetimeSec ?? 300);
  const claims: Record<string, string | number> = { iss: agentId, sub: agentId, type: 'agent', iat, exp };
  if (input.jti !== undefined) claims['jti'] = input.jti;
  if (input.htu !== undefined) claims['htu'] = input.htu;
  return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'JWT' }).sign(privateKey);
}

/** A new agent key pair; the private key is extractable so an SDK can save it. */
export async function generateAgentKeyPair(): Promise<{ privateKey: CryptoKey; publicJwk: EcP256PublicJwk }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, publicJwk: parsePublicP256Jwk(await exportJWK(publicKey)) };
}
