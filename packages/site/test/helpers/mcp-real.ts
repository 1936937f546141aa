import { createHash, randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { generateAgentKeyPair, jwkThumbprint } from '@mandate/protocol';
import { seconds } from '../../../server/src/clock.ts';
import { newId } from '../../../server/src/domain/ids.ts';
import { mintCode, newCodeId } from '../../../server/src/domain/oidc/codes.ts';
import type { AgentRecord, GrantRecord } from '../../../server/src/store/ports/index.ts';
import { expectStatus, json, remoteAddress } from '../../../server/test/helpers/app.ts';
import { assertionOptions, ownerWithPasskey, respond, type Owner } from '../../../server/test/helpers/approvals.ts';
import { SoftAuthenticator } from '../../../server/test/helpers/soft-authenticator.ts';
import { type Mandate, RealClock, startMandate } from './mandate.ts';
import type { App } from './mcp-stand-in.ts';

/**
 * A real Mandate for mcpAuth: an owner with a passkey, apps (agents of kind `app`, as the first
 * consent of a client creates them) with a grant for the MCP server's resource, and passes from the
 * real `/oidc/token`, bound to a DPoP key when asked. The codes are minted as the consent page's
 * approval mints them (the browser flow itself is A's to test).
 */
export type RealMandate = Mandate & { owner: Owner };

const REDIRECT = 'http://127.0.0.1:7/callback';

export async function startRealMandate(): Promise<RealMandate> {
  const m = await startMandate({ clock: new RealClock(Date.now()) });
  const owner = await ownerWithPasskey(m, new SoftAuthenticator({ origin: m.url }));
  return Object.assign(m, { owner });
}

export type RealApp = App & { record: AgentRecord; grant: GrantRecord };

/** A client registered by itself (RFC 7591) and its app for the owner, with a grant for `resource`. */
export async function realApp(m: RealMandate, resource: string, scopes: string[]): Promise<RealApp> {
  const reg = await m.app.inject({ method: 'POST', url: '/oidc/register', remoteAddress: remoteAddress(), payload: { client_name: 'Notes client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' } });
  expectStatus(reg, 201);
  const clientId = json<{ client_id: string }>(reg).client_id;
  const now = m.clock.now();
  const record: AgentRecord = {
    id: newId('ag'), userId: m.owner.user.id, name: 'Notes client', kind: 'app', clientId, publicJwk: null, jkt: null,
    status: 'active', flag: 'ok', flagRevSeq: null, createdAt: now, removedAt: null, unblockedAt: null, unblockedRevSeq: null,
  };
  await m.services.store.agents.create(record);
  const grant: GrantRecord = {
    id: newId('gr'), userId: m.owner.user.id, agentId: record.id, site: new URL(resource).host, scopes, userInfo: [],
    status: 'active', createdAt: now, expiresAt: null, usesLeft: null, refreshHash: null, passesIssued: 0,
    revokedAt: null, revSeq: null, supersededAt: null, resource,
  };
  await m.services.store.grants.create(grant);
  // The client's own DPoP key (used only when a bound pass is asked for).
  const { privateKey, publicJwk } = await generateAgentKeyPair();
  return { id: record.id, privateKey, publicJwk, jkt: await jwkThumbprint(publicJwk), clientId, grantId: grant.id, userId: m.owner.user.id, record, grant };
}

/** A pass from `/oidc/token` for the app's grant: bound to the app's DPoP key when `bound`. */
export async function realPass(m: RealMandate, a: RealApp, o: { bound: boolean }): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const code = mintCode(m.services.oidc.deps.secret, {
    jti: newCodeId(), clientId: a.clientId, redirectUri: REDIRECT, codeChallenge: createHash('sha256').update(verifier).digest('base64url'), nonce: null,
    agentId: a.id, userId: a.userId, grantId: a.grant.id, site: a.grant.site, scopes: a.grant.scopes,
    authTime: seconds(m.clock.now()), amr: ['passkey'], expiresAt: m.clock.now() + 60_000, dpopJkt: null, resource: a.grant.resource,
  });
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  // A token request's proof has no `ath` (RFC 9449 §4.2): no pass exists yet.
  if (o.bound) {
    headers['dpop'] = await new SignJWT({ jti: randomBytes(12).toString('base64url'), htm: 'POST', htu: `${m.url}/oidc/token`, iat: seconds(m.clock.now()) })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: a.publicJwk })
      .sign(a.privateKey);
  }
  const res = await fetch(`${m.url}/oidc/token`, {
    method: 'POST',
    headers,
    body: new URLSearchParams({ grant_type: 'authorization_code', client_id: a.clientId, code, code_verifier: verifier, redirect_uri: REDIRECT, resource: a.grant.resource ?? '' }).toString(),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || body.access_token === undefined) throw new Error(`/oidc/token: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/** The owner's answer to a pending request, with their passkey when approving. */
export async function ownerAnswers(m: RealMandate, txn: string, approve: boolean): Promise<void> {
  const body = approve ? { approve: true, assertion: m.owner.authenticator.assert(await assertionOptions(m, m.owner, txn)) } : { approve: false };
  expectStatus(await respond(m, m.owner, txn, body), 200);
}

/** The owner's pending requests filed by a site (the MCP server's step-ups), newest last. */
export async function pendingSiteStepups(m: RealMandate): Promise<{ id: string; action?: string; details?: { summary: string; digest: string } }[]> {
  const me = json<{ pending: Record<string, unknown>[] }>(await m.app.inject({ url: '/api/me', headers: m.owner.auth }));
  return me.pending.filter((p) => p['filed_by'] === 'site') as never;
}
