import type { LightMyRequestResponse } from 'fastify';
import { SignJWT } from 'jose';
import {
  createAgentJwt,
  createDpopProof,
  DPOP_TYP,
  generateAgentKeyPair,
  STEPUP_TYP,
  accessTokenHash,
  type EcP256PublicJwk,
  type StepupClaims,
} from '@mandate/protocol';
import { randomBytes } from 'node:crypto';
import { seconds } from '../../src/domain/clock.ts';
import { newId } from '../../src/domain/ids.ts';
import type { GrantRecord } from '../../src/store/ports.ts';
import { json, signUp, type TestApp } from './app.ts';

/**
 * Fixtures for the pass, verify and step-up tests: an owner with an agent (real key pair, created
 * over HTTP), grants written straight into the store, and agent-side signing on the test's fixed clock.
 */

export interface TestAgent {
  id: string;
  name: string;
  jkt: string;
  privateKey: CryptoKey;
  publicJwk: EcP256PublicJwk;
  owner: Awaited<ReturnType<typeof signUp>>;
}

export async function createAgent(t: TestApp, owner?: TestAgent['owner'], name = 'Shopper'): Promise<TestAgent> {
  const o = owner ?? (await signUp(t.app));
  const { privateKey, publicJwk } = await generateAgentKeyPair();
  const res = await t.app.inject({ method: 'POST', url: '/api/agents', headers: o.auth, payload: { name, jwk: publicJwk } });
  if (res.statusCode !== 200) throw new Error(`agent creation failed: ${res.statusCode} ${res.body}`);
  const body = json<{ id: string; jkt: string }>(res);
  return { id: body.id, name, jkt: body.jkt, privateKey, publicJwk, owner: o };
}

export function agentJwt(t: TestApp, agent: TestAgent): Promise<string> {
  return createAgentJwt(agent.privateKey, agent.id, { iat: seconds(t.clock.now()) });
}

export async function createGrant(
  t: TestApp,
  agent: TestAgent,
  o: { site?: string; scopes?: string[]; userInfo?: string[]; expiresAt?: number | null; usesLeft?: number | null; createdAt?: number } = {},
): Promise<GrantRecord> {
  const grant: GrantRecord = {
    id: newId('gr'),
    userId: agent.owner.user.id,
    agentId: agent.id,
    site: o.site ?? 'shop.example',
    scopes: o.scopes ?? ['list', 'orders:read'],
    userInfo: o.userInfo ?? [],
    status: 'active',
    createdAt: o.createdAt ?? t.clock.now(),
    expiresAt: o.expiresAt ?? null,
    usesLeft: o.usesLeft ?? null,
    refreshHash: null,
    passesIssued: 0,
    revokedAt: null,
    revSeq: null,
  };
  await t.services.store.grants.create(grant);
  return grant;
}

export interface TokenBody {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
  scope: string[];
  grant_expires_at: string | null;
  grant_uses_left: number | null;
}

export async function requestToken(t: TestApp, agent: TestAgent, site = 'shop.example', refreshToken?: string): Promise<LightMyRequestResponse> {
  const payload: Record<string, string> = { agent_id: agent.id, site, agent_jwt: await agentJwt(t, agent) };
  if (refreshToken !== undefined) payload.refresh_token = refreshToken;
  return t.app.inject({ method: 'POST', url: '/api/v1/token', payload });
}

export async function getPass(t: TestApp, agent: TestAgent, site = 'shop.example', refreshToken?: string): Promise<TokenBody> {
  const res = await requestToken(t, agent, site, refreshToken);
  if (res.statusCode !== 200) throw new Error(`token failed: ${res.statusCode} ${res.body}`);
  return json<TokenBody>(res);
}

export const randomJti = (): string => randomBytes(12).toString('base64url');

/** A DPoP proof on the fixed clock. */
export function proof(t: TestApp, agent: TestAgent, accessToken: string, o: { method?: string; url?: string; iat?: number; jti?: string } = {}): Promise<string> {
  return createDpopProof(agent.privateKey, agent.publicJwk, {
    htm: o.method ?? 'GET',
    htu: o.url ?? 'https://shop.example/orders',
    accessToken,
    iat: o.iat ?? seconds(t.clock.now()),
    jti: o.jti ?? randomJti(),
  });
}

/** A proof whose htu is written exactly as given (createDpopProof would normalise it). */
export function rawProof(t: TestApp, agent: TestAgent, accessToken: string, htu: string, method = 'GET'): Promise<string> {
  return new SignJWT({ htm: method, htu, iat: seconds(t.clock.now()), jti: randomJti(), ath: accessTokenHash(accessToken) })
    .setProtectedHeader({ typ: DPOP_TYP, alg: 'ES256', jwk: agent.publicJwk })
    .sign(agent.privateKey);
}

/** A step-up token as the approval flow mints it (claims of decisions §5), with overrides. */
export function mintStepup(t: TestApp, agent: TestAgent, o: Partial<StepupClaims> = {}): Promise<string> {
  const iat = o.iat ?? seconds(t.clock.now());
  const claims: StepupClaims = {
    iss: t.config.baseUrl,
    sub: agent.id,
    aud: 'shop.example',
    user: agent.owner.user.id,
    act: ['checkout'],
    type: 'stepup',
    jti: randomJti(),
    iat,
    exp: iat + 60,
    cnf: { dpop: agent.jkt, jkt: agent.jkt },
    ...o,
  };
  return t.services.keys.sign({ ...claims }, STEPUP_TYP);
}

export interface VerifyBody {
  valid: boolean;
  error?: string;
  error_description?: string;
  agent_id?: string;
  agent_name?: string;
  user_id?: string;
  site?: string;
  scopes?: string[];
  user_info?: Record<string, string>;
  stepup?: boolean;
  actions?: string[];
}

export async function verify(t: TestApp, payload: unknown): Promise<VerifyBody> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/verify', payload: payload as Record<string, unknown> });
  if (res.statusCode !== 200) throw new Error(`verify answered ${res.statusCode}: ${res.body}`);
  return json<VerifyBody>(res);
}

export async function stepupVerify(t: TestApp, payload: unknown): Promise<VerifyBody> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/stepup/verify', payload: payload as Record<string, unknown> });
  if (res.statusCode !== 200) throw new Error(`stepup/verify answered ${res.statusCode}: ${res.body}`);
  return json<VerifyBody>(res);
}

/** Pass + fresh proof for one request to https://shop.example/orders. */
export async function verifyBody(
  t: TestApp,
  agent: TestAgent,
  accessToken: string,
  extra: Record<string, unknown> = {},
): Promise<{ access_token: string; dpop: string; method: string; url: string; [field: string]: unknown }> {
  return { access_token: accessToken, dpop: await proof(t, agent, accessToken), method: 'GET', url: 'https://shop.example/orders', ...extra };
}
