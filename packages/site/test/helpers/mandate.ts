import { randomBytes } from 'node:crypto';
import { createDpopProof, type StepupClaims } from '@mandate/protocol';
import { FixedClock, seconds } from '../../../server/src/clock.ts';
import { testApp, type TestApp } from '../../../server/test/helpers/app.ts';
import { createAgent, createGrant, type TestAgent } from '../../../server/test/helpers/agents.ts';
import { getPass, mintStepup } from '../../../server/test/helpers/passes.ts';
import { freePort } from '../../../server/test/helpers/server-process.ts';
import { verifyEmail } from '../../../server/test/helpers/email-links.ts';
import type { GrantRecord } from '../../../server/src/store/ports/index.ts';
import type { MandateRequest } from '../../src/index.ts';

/**
 * A real Mandate service for the SDK tests: the server's app (SQLite in a temp dir) listening on a
 * free port of 127.0.0.1, with BASE_URL = that address, so the SDK reaches it over real HTTP and
 * its `serviceUrl` is also the passes' issuer. Agents and grants come from the server's test
 * helpers; passes from `POST /api/v1/token`.
 */
export type Mandate = TestApp & { url: string };

/** A clock that follows real time, for tests with other processes (which use real time). */
export class RealClock extends FixedClock {
  override now(): number {
    return Date.now();
  }
}

export async function startMandate(o: { clock?: FixedClock } = {}): Promise<Mandate> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const t = await testApp({ env: { BASE_URL: url }, ...(o.clock ? { clock: o.clock } : {}) });
  await t.app.listen({ port, host: '127.0.0.1' });
  return Object.assign(t, { url });
}

export const SITE = 'shop.example';
export const PUBLIC_BASE = 'https://shop.example';

export type AgentWithPass = { agent: TestAgent; grant: GrantRecord; pass: string };
/** What signing a request needs: the agent (its key) and its pass. */
export type PassHolder = Pick<AgentWithPass, 'agent' | 'pass'>;

/** A fresh owner and agent with an active grant at `site` and a pass from the token endpoint. */
export async function agentWithPass(m: Mandate, o: { site?: string; scopes?: string[]; userInfo?: string[] } = {}): Promise<AgentWithPass> {
  const site = o.site ?? SITE;
  const agent = await createAgent(m);
  // An owner's email is released to sites only once the owner has proven it (decisions §25).
  if (o.userInfo?.includes('user:email')) await verifyEmail(m, agent.owner);
  const grant = await createGrant(m, agent, { site, scopes: o.scopes ?? ['list', 'orders:read', 'checkout'], userInfo: o.userInfo ?? [] });
  const pass = (await getPass(m, agent, site)).access_token;
  return { agent, grant, pass };
}

export const randomJti = (): string => randomBytes(12).toString('base64url');

export type ProofOptions = { method?: string; htu?: string; iat?: number; jti?: string; signer?: TestAgent; accessToken?: string };

/** A DPoP proof by the agent (or `signer`) for the request, on the service's clock. */
export function proofFor(m: Mandate, a: PassHolder, method: string, htu: string, o: ProofOptions = {}): Promise<string> {
  const signer = o.signer ?? a.agent;
  return createDpopProof(signer.privateKey, signer.publicJwk, {
    htm: o.method ?? method,
    htu: o.htu ?? htu,
    accessToken: o.accessToken ?? a.pass,
    iat: o.iat ?? seconds(m.clock.now()),
    jti: o.jti ?? randomJti(),
  });
}

export type RequestOptions = {
  method?: string;
  path?: string;
  /** Public base the proof signs; PUBLIC_BASE by default. */
  base?: string;
  proof?: ProofOptions;
  /** Replaces the pass in the Authorization header (the proof still hashes `proof.accessToken ?? a.pass`). */
  pass?: string;
  /** null: no DPoP header. */
  dpop?: string | null;
  stepup?: string;
  headers?: Record<string, string>;
};

/** A framework-free request as the agent sends it: pass, fresh proof for (method, base + path), optional step-up. */
export async function agentRequest(m: Mandate, a: PassHolder, o: RequestOptions = {}): Promise<MandateRequest> {
  const method = o.method ?? 'GET';
  const path = o.path ?? '/orders';
  const headers: Record<string, string> = { host: 'internal:8080', authorization: `Bearer ${o.pass ?? a.pass}`, ...o.headers };
  const dpop = o.dpop === undefined ? await proofFor(m, a, method, (o.base ?? PUBLIC_BASE) + path, o.proof) : o.dpop;
  if (dpop !== null) headers['dpop'] = dpop;
  if (o.stepup !== undefined) headers['x-service-stepup'] = o.stepup;
  return { method, url: path, headers };
}

/** A step-up token as the approval flow mints it, for `action` at SITE (overridable). */
export function stepupFor(m: Mandate, a: PassHolder, action: string, over: Partial<StepupClaims> = {}): Promise<string> {
  return mintStepup(m, a.agent, { aud: SITE, act: [action], ...over });
}

/** Owner-side calls over the API (revocations), with the agent owner's session. */
export async function ownerCall(m: Mandate, a: AgentWithPass, method: 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>): Promise<void> {
  const res = await m.app.inject({ method, url, headers: a.agent.owner.auth, ...(payload === undefined ? {} : { payload }) });
  if (res.statusCode !== 200) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
}

export const quiet = (): void => {};
