import { type KeyResolver, type PassClaims, ProtocolError, type ResourcePassClaims, verifyPass, verifyResourcePass } from '@mandate/protocol';
import { type Clock, seconds } from '../../clock.ts';
import type { AgentRecord, AuthzRequestRecord, Store } from '../../store/ports/index.ts';
import { forbidden, unauthorized } from '../errors.ts';
import { checkPassRevocation } from './revocation-check.ts';

export interface PassBearerDeps {
  store: Store;
  clock: Clock;
  keys: { resolver: KeyResolver };
  /** The service's base URL: the pass's `iss`. */
  issuer: string;
}

/** A pass a site may present: an agent's, or an app's pass for a protected resource (decisions §28). */
export type BearerPass = PassClaims | ResourcePassClaims;

/** A site that presented a live pass of an agent: the pass's claims and its agent (or app) as stored now. */
export interface PassBearer {
  pass: BearerPass;
  agent: AgentRecord;
}

/** Whether the pass is an app's resource pass (its `aud` a resource URL). */
export const isResourcePass = (pass: BearerPass): pass is ResourcePassClaims => 'client_id' in pass && typeof pass.client_id === 'string';

const AGENT_REVOKED = 'agent revoked by its owner';
const SEND_PASS = 'send the pass the agent presented to you: Authorization: Bearer <pass> (or access_token in the body)';

/**
 * Authenticates a site by a pass it was shown (the site step-up, decisions §28): the pass is
 * checked as cloud verify checks it (signature, issuer, type, expiry, then the revocation of its
 * agent and grant, at once: §6) but without a DPoP proof, since the site does not hold the agent's
 * key. The only effects this opens are a card to the pass's owner and reading its answer.
 *
 * An app's resource pass (decisions §28) is accepted the same way: the protected resource is the
 * site that asks, and its grant must be for exactly the pass's `aud` (revocation-check.ts).
 *
 * 401 for no pass or one that does not verify or has expired; 403 when its agent or its access was
 * revoked (the detail of an agent's says `revoked`, decisions §4).
 */
export async function passBearer(d: PassBearerDeps, token: unknown): Promise<PassBearer> {
  if (typeof token !== 'string' || token.length === 0) throw unauthorized(SEND_PASS);
  let pass: BearerPass;
  try {
    // The audience is whatever site the pass is for: that site is the one asking.
    const claimed = claimedClaims(token);
    const o = { keys: d.keys.resolver, issuer: d.issuer, now: seconds(d.clock.now()) };
    // A pass names its kind by `client_id` (only resource passes carry one); each kind is then verified as
    // exactly that kind, so an agent's pass never passes as a resource pass nor the reverse.
    pass = claimed.client_id !== undefined ? await verifyResourcePass(token, { ...o, resource: claimed.aud }) : await verifyPass(token, { ...o, site: claimed.aud });
  } catch (e) {
    if (e instanceof ProtocolError) throw unauthorized(e.code === 'token_expired' ? 'the pass has expired: ask the agent for a fresh one' : `invalid pass: ${e.code}`);
    throw e;
  }
  await assertPassStanding(d.store, pass);
  const agent = await d.store.agents.byId(pass.sub);
  if (agent === undefined) throw forbidden(AGENT_REVOKED);
  return { pass, agent };
}

/** 403 unless the pass's agent and grant stand now (cloud verify's rule, read from the shared store). */
export async function assertPassStanding(store: Store, pass: BearerPass): Promise<void> {
  const { verdict } = await checkPassRevocation(store, pass);
  if (verdict === 'agent_revoked') throw forbidden(AGENT_REVOKED);
  if (verdict === 'grant_revoked') throw forbidden('the access this pass was issued for was revoked by its owner');
}

/**
 * Whether a pass may follow a site step-up: the site filed it, and the pass is of the same agent,
 * grant and site. A fresh pass the agent got since (passes last 10 minutes, the owner has 5) does.
 */
export function bearerFiled(bearer: PassBearer, request: AuthzRequestRecord): boolean {
  return request.filedBy === 'site' && request.kind === 'stepup' && request.agentId === bearer.pass.sub && request.grantId === bearer.pass.grant && request.site === bearer.pass.aud;
}

/**
 * The `aud` a token claims ('' when none) and whether it carries a `client_id`, read unverified only
 * to know which kind of pass and which audience to check it as.
 */
function claimedClaims(token: string): { aud: string; client_id?: unknown } {
  try {
    const claims: unknown = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
    if (typeof claims !== 'object' || claims === null) return { aud: '' };
    const { aud, client_id } = claims as { aud?: unknown; client_id?: unknown };
    return { aud: typeof aud === 'string' ? aud : '', ...(client_id !== undefined ? { client_id } : {}) };
  } catch {
    return { aud: '' };
  }
}
