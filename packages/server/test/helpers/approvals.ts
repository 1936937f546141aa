import type { LightMyRequestResponse } from 'fastify';
import type { TestAgent } from './agents.ts';
import { expectStatus, json, remoteAddress, signUp, type TestApp } from './app.ts';
import { SoftAuthenticator } from './soft-authenticator.ts';

/** Helpers for the approval, grant and step-up tests: an owner with a passkey, access requests, approvals. */

export type Owner = Awaited<ReturnType<typeof signUp>> & { authenticator: SoftAuthenticator };

/** Registers one more passkey (a new soft authenticator) for the owner. */
export async function addPasskey(t: TestApp, owner: { auth: Record<string, string> }, authenticator = new SoftAuthenticator()): Promise<SoftAuthenticator> {
  const opts = await t.app.inject({ method: 'GET', url: '/api/webauthn/register/options', headers: owner.auth });
  expectStatus(opts, 200);
  const { challenge, options } = json<{ challenge: string; options: { challenge: string; user: { id: string } } }>(opts);
  const res = await t.app.inject({ method: 'POST', url: '/api/webauthn/register/verify', headers: owner.auth, payload: { challenge, attestation: authenticator.register(options) } });
  expectStatus(res, 200);
  return authenticator;
}

/** A new owner with one registered passkey (`authenticator`: one for another origin than the default). */
export async function ownerWithPasskey(t: TestApp, authenticator = new SoftAuthenticator()): Promise<Owner> {
  const owner = await signUp(t.app);
  return { ...owner, authenticator: await addPasskey(t, owner, authenticator) };
}

/**
 * The owner signed in again with their passkey. Adding a second passkey (or removing one) needs
 * such a session: a password session may only register the first.
 */
export async function withPasskeySession(t: TestApp, owner: Owner): Promise<Owner> {
  const opts = await t.app.inject({ method: 'GET', url: `/api/webauthn/login/options?email=${encodeURIComponent(owner.email)}`, remoteAddress: remoteAddress() });
  expectStatus(opts, 200);
  const { challenge, options } = json<{ challenge: string; options: { challenge: string } }>(opts);
  const res = await t.app.inject({ method: 'POST', url: '/api/webauthn/login/verify', remoteAddress: remoteAddress(), payload: { challenge, assertion: owner.authenticator.assert(options) } });
  expectStatus(res, 200);
  return { ...owner, auth: { authorization: `Bearer ${json<{ session_token: string }>(res).session_token}` } };
}

export async function postAccessRequest(t: TestApp, agent: TestAgent, body: Record<string, unknown> = {}): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/authz-requests',
    remoteAddress: remoteAddress(),
    payload: { agent_id: agent.id, site: 'shop.example', scopes: ['orders:read'], agent_jwt: await agent.jwt(), ...body },
  });
}

/** Creates an access request and returns its txn id. */
export async function accessRequest(t: TestApp, agent: TestAgent, body: Record<string, unknown> = {}): Promise<string> {
  const res = await postAccessRequest(t, agent, body);
  expectStatus(res, 200);
  return json<{ txn_id: string }>(res).txn_id;
}

export async function assertionOptions(t: TestApp, owner: { auth: Record<string, string> }, txnId: string): Promise<{ challenge: string; allowCredentials?: { id: string }[] }> {
  const res = await t.app.inject({ method: 'GET', url: `/api/txn/${txnId}/assertion-options`, headers: owner.auth });
  expectStatus(res, 200);
  return json<{ options: { challenge: string; allowCredentials?: { id: string }[] } }>(res).options;
}

export function respond(t: TestApp, owner: { auth: Record<string, string> }, txnId: string, body: Record<string, unknown>): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'POST', url: `/api/txn/${txnId}/response`, headers: owner.auth, payload: body });
}

/** Approves with a genuine passkey assertion; `extra` may narrow or set limits. */
export async function approve(t: TestApp, owner: Owner, txnId: string, extra: Record<string, unknown> = {}): Promise<LightMyRequestResponse> {
  const options = await assertionOptions(t, owner, txnId);
  return respond(t, owner, txnId, { approve: true, assertion: owner.authenticator.assert(options), ...extra });
}

/** Request + approval in one: returns the txn id; the grant exists afterwards. */
export async function grantAccess(t: TestApp, owner: Owner, agent: TestAgent, body: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<string> {
  const txnId = await accessRequest(t, agent, body);
  expectStatus(await approve(t, owner, txnId, extra), 200);
  return txnId;
}

export function poll(t: TestApp, txnId: string, agentJwt?: string): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', url: `/api/v1/authz-requests/${txnId}`, headers: agentJwt === undefined ? {} : { 'x-agent-jwt': agentJwt } });
}
