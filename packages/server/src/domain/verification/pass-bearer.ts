import { type KeyResolver, type PassClaims, ProtocolError, verifyPass } from '@mandate/protocol';
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

/** A site that presented a live pass of an agent: the pass's claims and its agent as stored now. */
export interface PassBearer {
  pass: PassClaims;
  agent: AgentRecord;
}

const AGENT_REVOKED = 'agent revoked by its owner';
const SEND_PASS = 'send the pass the agent presented to you: Authorization: Bearer <pass> (or access_token in the body)';

/**
 * Authenticates a site by a pass it was shown (the site step-up, decisions §28): the pass is
 * checked as cloud verify checks it (signature, issuer, type, expiry, then the revocation of its
 * agent and grant, at once: §6) but without a DPoP proof, since the site does not hold the agent's
 * key. The only effects this opens are a card to the pass's owner and reading its answer.
 *
 * 401 for no pass or one that does not verify or has expired; 403 when its agent or its access was
 * revoked (the detail of an agent's says `revoked`, decisions §4).
 */
export async function passBearer(d: PassBearerDeps, token: unknown): Promise<PassBearer> {
  if (typeof token !== 'string' || token.length === 0) throw unauthorized(SEND_PASS);
  let pass: PassClaims;
  try {
    // The audience is whatever site the pass is for: that site is the one asking.
    pass = await verifyPass(token, { keys: d.keys.resolver, issuer: d.issuer, now: seconds(d.clock.now()), site: claimedAudience(token) });
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
export async function assertPassStanding(store: Store, pass: PassClaims): Promise<void> {
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

/** The `aud` a token claims, read unverified only to know which audience to check it against ('' when none). */
function claimedAudience(token: string): string {
  try {
    const claims: unknown = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
    const aud = typeof claims === 'object' && claims !== null ? (claims as { aud?: unknown }).aud : undefined;
    return typeof aud === 'string' ? aud : '';
  } catch {
    return '';
  }
}
