import { randomBytes } from 'node:crypto';
import { createAgentJwt, createDpopProof, generateAgentKeyPair, type EcP256PublicJwk } from '@mandate/protocol';
import { SoftAuthenticator } from './soft-authenticator.ts';
import { until } from './until.ts';

/**
 * The service over real HTTP, for every test that runs it as its own process (`startServer()`):
 * the end-to-end journeys, the agent SDK and CLI, the owner app, multi-node, crashes, database
 * restarts, fuzzing. Owners sign up and approve with a passkey (a `SoftAuthenticator`, the "phone")
 * through `/api/txn/{id}/assertion-options` + `/api/txn/{id}/response`, as the owner app does;
 * agents are key pairs registered by their owner. The in-process tests do the same on
 * `app.inject` with ./approvals.ts and ./agents.ts.
 */

/** Where to send requests: a node's listening address (`ServerProcess.url`). */
export interface Target {
  url: string;
}

export interface Reply<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

/** JSON over HTTP. An empty body comes back as null, one that is not JSON as `{raw}`; a failed connection throws. */
export async function call<T = Record<string, unknown>>(node: Target, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> {
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { raw: text };
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/** Throws with the answer unless it has `status`. */
export function expectStatus<T>(reply: Reply<T>, status: number, what: string): Reply<T> {
  if (reply.status !== status) throw new Error(`${what}: expected ${status}, got ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply;
}

/** What approving needs of an owner: a session and the passkey registered with it. */
export interface RemoteOwner {
  id: string;
  email: string;
  password: string;
  auth: Record<string, string>;
  authenticator: SoftAuthenticator;
}

/**
 * An open request of the owner's agents, as `GET /api/me` lists it in `pending`; `details`: what an
 * agent approval says, and the details a step-up or agent approval is bound to (decisions §29);
 * `filed_by: "site"` for a site step-up (decisions §28).
 */
export type PendingRequest = { id: string; kind: string; agent_id: string; site: string; scopes: string[]; action?: string; filed_by?: 'site'; details?: { summary?: string; digest?: string; [field: string]: unknown } };

/** A live grant, as `GET /api/me` lists it in `grants`. */
export type Grant = { id: string; agent_id: string; site: string; scopes: string[] };

/**
 * An owner with one passkey, and the requests the owner app makes for them on `node`. Every request
 * goes to `node`; the free functions below take the node per call, for tests that spread one
 * owner's requests over several nodes.
 */
export class HttpOwner implements RemoteOwner {
  private constructor(
    readonly node: Target,
    readonly id: string,
    readonly email: string,
    readonly password: string,
    readonly auth: Record<string, string>,
    readonly authenticator: SoftAuthenticator,
  ) {}

  /**
   * Signs up a new owner (`POST /api/users`, a random email starting with `label` unless `email` is
   * given, a random password unless `password` is) and registers one passkey. `origin` is the
   * service's public BASE_URL (`ServerProcess.baseUrl`): WebAuthn ceremonies are bound to it. Sign-ups
   * are limited to 10 per hour per client address, and every test process talks from 127.0.0.1: a
   * test file should need only a few per server.
   */
  static async signUp(node: Target, origin: string, opts: { label?: string; email?: string; password?: string } = {}): Promise<HttpOwner> {
    const email = opts.email ?? `${opts.label ?? 'owner'}-${randomBytes(6).toString('hex')}@example.com`;
    const password = opts.password ?? `pw-${randomBytes(9).toString('base64url')}`;
    const signUp = expectStatus(await call<{ user: { id: string }; session_token: string }>(node, 'POST', '/api/users', { email, password }), 200, `sign-up of ${email}`);
    const auth = { authorization: `Bearer ${signUp.body.session_token}` };
    const authenticator = new SoftAuthenticator({ origin });
    const opt = expectStatus(await call<{ challenge: string; options: { challenge: string; user: { id: string } } }>(node, 'GET', '/api/webauthn/register/options', undefined, auth), 200, 'register options');
    expectStatus(await call(node, 'POST', '/api/webauthn/register/verify', { challenge: opt.body.challenge, attestation: authenticator.register(opt.body.options) }, auth), 200, 'register passkey');
    return new HttpOwner(node, signUp.body.user.id, email, password, auth, authenticator);
  }

  /** A request with the owner's session; any status. */
  call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<Reply<T>> {
    return call<T>(this.node, method, path, body, this.auth);
  }

  /** A request that must answer 200; its body. */
  async ok<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
    return expectStatus(await this.call<T>(method, path, body), 200, `${method} ${path}`).body;
  }

  async pending(): Promise<PendingRequest[]> {
    return (await this.ok<{ pending: PendingRequest[] }>('GET', '/api/me')).pending;
  }

  async grants(): Promise<Grant[]> {
    return (await this.ok<{ grants: Grant[] }>('GET', '/api/me')).grants;
  }

  /** Creates an agent with the public key `jwk` (POST /api/agents); its id. */
  async createAgent(name: string, jwk: unknown): Promise<string> {
    return (await this.ok<{ id: string }>('POST', '/api/agents', { name, jwk })).id;
  }

  /** Approves one request with a passkey assertion over its challenge; `extra` may narrow or set limits. */
  async approve(txnId: string, extra: Record<string, unknown> = {}): Promise<void> {
    expectStatus(await remoteDecide(this.node, this, txnId, true, extra), 200, `approve ${txnId}`);
  }

  async deny(txnId: string): Promise<void> {
    expectStatus(await remoteDecide(this.node, this, txnId, false), 200, `deny ${txnId}`);
  }

  async flag(agentId: string, flag: 'ok' | 'suspicious' | 'revoked'): Promise<void> {
    await this.ok('POST', `/api/agents/${agentId}/flag`, { flag });
  }

  /** Waits (at most `ms`) for an open request of this kind by the agent, as the phone would show it. */
  nextPending(agentId: string, kind: string, ms = 30_000): Promise<PendingRequest> {
    return until(`a pending ${kind} request of ${agentId}`, async () => (await this.pending()).find((p) => p.agent_id === agentId && p.kind === kind), { ms });
  }

  /** Approves (or denies) the agent's next request of this kind once it shows up, and returns it: the owner answering the card while the agent waits. */
  async answerNext(agentId: string, kind: string, answer: 'approve' | 'deny' = 'approve'): Promise<PendingRequest> {
    const p = await this.nextPending(agentId, kind);
    if (answer === 'approve') await this.approve(p.id);
    else await this.deny(p.id);
    return p;
  }
}

/**
 * Approves (or denies) a request with a passkey assertion on `node`; the answer as it is. One owner's
 * approvals must not run concurrently: the authenticator's sign counter must reach the service in
 * increasing order.
 */
export async function remoteDecide(node: Target, owner: RemoteOwner, txnId: string, approve = true, extra: Record<string, unknown> = {}): Promise<Reply> {
  if (!approve) return call(node, 'POST', `/api/txn/${txnId}/response`, { approve: false }, owner.auth);
  const opts = await call<{ options: { challenge: string; allowCredentials?: { id: string }[] } }>(node, 'GET', `/api/txn/${txnId}/assertion-options`, undefined, owner.auth);
  if (opts.status !== 200) return opts as unknown as Reply;
  return call(node, 'POST', `/api/txn/${txnId}/response`, { approve: true, assertion: owner.authenticator.assert(opts.body.options), ...extra }, owner.auth);
}

export interface RemoteAgent {
  id: string;
  jkt: string;
  /** (jose's CryptoKey type: the e2e project has no DOM lib.) */
  privateKey: Awaited<ReturnType<typeof generateAgentKeyPair>>['privateKey'];
  publicJwk: EcP256PublicJwk;
  /** A fresh agent JWT at the real time. */
  jwt(): Promise<string>;
  /** A fresh DPoP proof for one request to `url` with `accessToken`. */
  proof(accessToken: string, url: string, method?: string): Promise<string>;
}

/** Creates an agent of `owner` with a new key pair (POST /api/agents). */
export async function remoteAgent(node: Target, owner: RemoteOwner, name = 'Agent'): Promise<RemoteAgent> {
  const { privateKey, publicJwk } = await generateAgentKeyPair();
  const created = expectStatus(await call<{ id: string; jkt: string }>(node, 'POST', '/api/agents', { name, jwk: publicJwk }, owner.auth), 200, 'create agent');
  const id = created.body.id;
  return {
    id,
    jkt: created.body.jkt,
    privateKey,
    publicJwk,
    jwt: () => createAgentJwt(privateKey, id),
    proof: (accessToken, url, method = 'GET') => createDpopProof(privateKey, publicJwk, { htm: method, htu: url, accessToken }),
  };
}

/** POST /api/v1/authz-requests. */
export async function remoteAccessRequest(node: Target, agent: RemoteAgent, site: string, scopes: string[] = ['orders:read']): Promise<Reply<{ txn_id: string }>> {
  return call(node, 'POST', '/api/v1/authz-requests', { agent_id: agent.id, site, scopes, agent_jwt: await agent.jwt() });
}

/** Access request plus approval: the agent holds a grant at `site` afterwards. Returns the txn id. */
export async function remoteGrant(node: Target, owner: RemoteOwner, agent: RemoteAgent, site: string, limits?: { max_uses?: number; expires_in?: number }): Promise<string> {
  const txn = expectStatus(await remoteAccessRequest(node, agent, site), 200, 'access request').body.txn_id;
  expectStatus(await remoteDecide(node, owner, txn, true, limits ? { limits } : {}), 200, 'approve');
  return txn;
}

export interface TokenBody {
  access_token: string;
  refresh_token: string;
  grant_uses_left: number | null;
}

/** POST /api/v1/token, with or without a refresh token. */
export async function remoteToken(node: Target, agent: RemoteAgent, site: string, refreshToken?: string): Promise<Reply<TokenBody>> {
  return call(node, 'POST', '/api/v1/token', { agent_id: agent.id, site, agent_jwt: await agent.jwt(), ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }) });
}

/** POST /api/v1/stepup: the agent asks for one action. */
export async function remoteStepupRequest(node: Target, agent: RemoteAgent, site: string, action: string): Promise<Reply<{ txn_id: string }>> {
  return call(node, 'POST', '/api/v1/stepup', { agent_id: agent.id, site, action, agent_jwt: await agent.jwt() });
}

/** Polls an approved step-up with the agent's JWT: the one answer that collects it carries `stepup_token`. */
export async function remoteCollect(node: Target, agent: RemoteAgent, txnId: string): Promise<Reply<{ status: string; stepup_token?: string; stepup_token_error?: string }>> {
  return call(node, 'GET', `/api/v1/authz-requests/${txnId}`, undefined, { 'x-agent-jwt': await agent.jwt() });
}

/** Every activity record of the owner, newest first, following `next_before` page by page. */
export async function remoteActivity(node: Target, owner: RemoteOwner): Promise<{ seq: number; action: string; detail: Record<string, unknown> }[]> {
  const all: { seq: number; action: string; detail: Record<string, unknown> }[] = [];
  let before = 0;
  for (;;) {
    const page = expectStatus(await call<{ items: { seq: number; action: string; detail: Record<string, unknown> }[]; next_before: number | null }>(node, 'GET', `/api/activity?limit=200&before=${before}`, undefined, owner.auth), 200, 'activity');
    all.push(...page.body.items);
    if (page.body.next_before === null) return all;
    before = page.body.next_before;
  }
}
