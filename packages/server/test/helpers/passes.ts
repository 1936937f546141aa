import type { LightMyRequestResponse } from 'fastify';
import { SignJWT } from 'jose';
import { createDpopProof, DPOP_TYP, PASS_TYP, STEPUP_TYP, accessTokenHash, type PassClaims, type StepupClaims } from '@mandate/protocol';
import { randomBytes } from 'node:crypto';
import { seconds } from '../../src/clock.ts';
import { newId } from '../../src/domain/ids.ts';
import { json, type TestApp } from './app.ts';
import { agentJwt, type TestAgent } from './agents.ts';

/**
 * Fixtures for the pass, verify, step-up and revocation tests (agents and grants: ./agents.ts):
 * passes over HTTP, agent-side signing on the test's fixed clock, and passes and step-up tokens
 * minted directly with the service's signing key.
 */

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

/** A pass as the token endpoint mints it, signed by the service's current key at the clock's time. */
export async function mintPass(t: TestApp, agent: TestAgent, site: string, over: Partial<PassClaims> = {}, typ = PASS_TYP): Promise<string> {
  const iat = seconds(t.clock.now());
  const claims: PassClaims = {
    iss: t.config.baseUrl,
    sub: agent.id,
    aud: site,
    user: agent.owner.user.id,
    scope: ['list'],
    cnf: { dpop: agent.jkt, jkt: agent.jkt },
    type: 'access',
    iat,
    exp: iat + 600,
    jti: randomBytes(16).toString('base64url'),
    grant: newId('gr'),
    rev_seq: await t.services.store.counters.current('rev_seq'),
    ...over,
  };
  return t.services.keys.sign(claims, typ);
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
