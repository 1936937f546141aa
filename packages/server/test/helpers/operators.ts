import { createHash, randomBytes } from 'node:crypto';
import { generateAgentKeyPair } from '@mandate/protocol';
import { expectStatus, json, signUp, type TestApp } from './app.ts';
import { type Owner, type TestAgent, agentJwt } from './agents.ts';

/** Helpers for the operator tests: HTTP Basic, an operator switched on, PKCE pairs. */

export const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });

export interface ActiveOperator {
  id: string;
  secret: string;
  redirectUri: string;
  /** Authorization: Basic op_id:secret. */
  auth: Record<string, string>;
}

/**
 * An operator registered over HTTP by a fresh person, its domain marked verified and switched on in
 * the store (the domain check and the admin switch have their own tests: operators*.test.ts).
 */
export async function activeOperator(t: TestApp, opts: { name?: string; redirectUris?: string[]; browser?: 'operator' | 'user'; status?: 'active' | 'pending' | 'disabled' } = {}): Promise<ActiveOperator> {
  const registrant = await signUp(t.app);
  const redirectUris = opts.redirectUris ?? ['https://acme.example/cb', 'https://acme.example/cb2'];
  const res = await t.app.inject({ method: 'POST', url: '/api/operators', headers: registrant.auth, payload: { name: opts.name ?? 'Acme agents', redirect_uris: redirectUris, browser: opts.browser ?? 'operator' } });
  expectStatus(res, 200);
  const { id, secret } = json<{ id: string; secret: string }>(res);
  await t.services.store.operators.markVerified(id, t.clock.now());
  const status = opts.status ?? 'active';
  if (status !== 'pending') await t.services.store.operators.switchStatus(id, ['pending'], 'active', t.clock.now());
  if (status === 'disabled') await t.services.store.operators.switchStatus(id, ['active'], 'disabled', t.clock.now());
  return { id, secret, redirectUri: redirectUris[0] as string, auth: basic(id, secret) };
}

/** A PKCE pair: a fresh code_verifier and its S256 code_challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier, 'ascii').digest('base64url') };
}

export interface Connected {
  connectionId: string;
  sub: string;
  maxAgents: number;
}

/**
 * `owner` connects `op` the whole way, as a person and an operator would: the consent confirmed with
 * the owner's passkey, then the operator's code exchange. Answers the connection.
 */
export async function connect(t: TestApp, op: ActiveOperator, owner: { auth: Record<string, string>; authenticator: { assert(options: unknown): unknown } }): Promise<Connected> {
  const { verifier, challenge } = pkce();
  const started = await t.app.inject({ method: 'POST', url: '/api/connect/start', headers: owner.auth, payload: { operator: op.id, redirect_uri: op.redirectUri, state: 's', code_challenge: challenge, code_challenge_method: 'S256' } });
  expectStatus(started, 200);
  const { consent_id, options } = json<{ consent_id: string; options: unknown }>(started);
  const finished = await t.app.inject({ method: 'POST', url: '/api/connect/finish', headers: owner.auth, payload: { consent_id, assertion: owner.authenticator.assert(options) as Record<string, unknown> } });
  expectStatus(finished, 200);
  const code = new URL(json<{ redirect: string }>(finished).redirect).searchParams.get('code');
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/operator/token', headers: op.auth, payload: { code, code_verifier: verifier, redirect_uri: op.redirectUri } });
  expectStatus(res, 200);
  const c = json<{ connection_id: string; sub: string; max_agents: number }>(res);
  return { connectionId: c.connection_id, sub: c.sub, maxAgents: c.max_agents };
}

/**
 * An agent `op` makes for `owner` through the connection (POST /api/v1/operator/agents), with a real
 * key pair: usable with the agent helpers (agent JWTs, grants, passes).
 */
export async function operatorAgent(t: TestApp, op: ActiveOperator, connectionId: string, owner: Owner, name = 'Helper'): Promise<TestAgent> {
  const { privateKey, publicJwk } = await generateAgentKeyPair();
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/operator/agents', headers: op.auth, payload: { connection_id: connectionId, name, jwk: publicJwk } });
  expectStatus(res, 200);
  const body = json<{ agent_id: string; name: string }>(res);
  const agent = (await t.services.store.agents.byId(body.agent_id)) as { jkt: string };
  const made: TestAgent = { id: body.agent_id, name: body.name, jkt: agent.jkt, privateKey, publicJwk, owner, jwt: () => agentJwt(t, made) };
  return made;
}
