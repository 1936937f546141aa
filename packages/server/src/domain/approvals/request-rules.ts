import { LIMITS, SCOPE_PATTERN, isValidAction } from '@mandate/protocol';
import type { AgentRecord, AuthzRequestRecord } from '../../store/ports/index.ts';
import { badRequest } from '../errors.ts';
import { newId } from '../ids.ts';

/** Access and step-up requests wait this long for the owner (interface.md "Limits"). */
export const REQUEST_LIFETIME_SEC = LIMITS.requestLifetimeSec;
export const REQUEST_LIFETIME_MS = REQUEST_LIFETIME_SEC * 1000;
/**
 * An approved step-up can be collected for this long after the owner's decision; afterwards it
 * reads `expired`. The spec is silent; without a bound an approval could be collected days later.
 */
export const STEPUP_COLLECT_WINDOW_MS = REQUEST_LIFETIME_MS;

/** Access requests: 20 per (agent, site) per 5 minutes; step-up requests: 10 per agent per minute. */
export const ACCESS_REQUEST_LIMIT = { limit: 20, windowSec: 300 } as const;
export const STEPUP_REQUEST_LIMIT = { limit: 10, windowSec: 60 } as const;

/** A new pending request of `agent` at `site`, waiting REQUEST_LIFETIME_MS from `now` for the owner. */
export function newPendingRequest(
  agent: AgentRecord,
  site: string,
  now: number,
  what: Pick<AuthzRequestRecord, 'kind' | 'scopes' | 'userInfo' | 'action' | 'grantId'> & Partial<Pick<AuthzRequestRecord, 'oidc' | 'expiresAt'>>,
): AuthzRequestRecord {
  return {
    id: newId('t'),
    kind: what.kind,
    agentId: agent.id,
    userId: agent.userId,
    site,
    scopes: what.scopes,
    userInfo: what.userInfo,
    action: what.action,
    status: 'pending',
    createdAt: now,
    expiresAt: what.expiresAt ?? now + REQUEST_LIFETIME_MS,
    decidedAt: null,
    grantId: what.grantId,
    oidc: what.oidc ?? null,
  };
}

export const SITE_MAX_LENGTH = 253;
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
/**
 * A site id is a host name as it appears in a URL, lower-cased: dot-separated labels of letters,
 * digits and inner hyphens (so also an IPv4 address), optionally with `:port` for sites reached on
 * a non-default port (test servers). No scheme, path, trailing dot, underscore or IPv6 literal.
 */
const SITE_PATTERN = new RegExp(`^${LABEL}(?:\\.${LABEL})*(?::[0-9]{1,5})?$`);

const SITE_PROBLEM = 'invalid site: use the host name of the site (for example shop.example.com, optionally with :port), at most 253 characters';

/** What is wrong with a site id (upper case is fine: it is lower-cased), or null. */
export function siteProblem(site: string): string | null {
  const s = site.toLowerCase();
  const port = /:([0-9]+)$/.exec(s)?.[1];
  if (s.length < 1 || s.length > SITE_MAX_LENGTH || !SITE_PATTERN.test(s) || (port !== undefined && (Number(port) < 1 || Number(port) > 65535))) return SITE_PROBLEM;
  return null;
}

/** The canonical site id (lower case) or 400 with what a site id looks like. */
export function normalizeSite(site: string): string {
  const problem = siteProblem(site);
  if (problem !== null) throw badRequest(problem, { next_step: 'send the bare host name, without scheme or path' });
  return site.toLowerCase();
}

/**
 * 1 to 20 scopes, each `[a-z0-9_:.-]`, 1 to 64 characters; duplicates collapse (order kept), and
 * the count is taken after collapsing. Scopes are shown to the owner as written, so nothing is
 * lower-cased for the agent: an upper-case scope is refused.
 */
export function normalizeScopes(scopes: readonly string[]): string[] {
  const problem = scopesProblem(scopes);
  if (problem !== null) throw badRequest(problem);
  return [...new Set(scopes)];
}

/** What is wrong with a scope list (the first problem, as normalizeScopes answers it), or null. */
export function scopesProblem(scopes: readonly string[]): string | null {
  const unique = [...new Set(scopes)];
  if (unique.length < 1 || unique.length > LIMITS.maxScopes) return `invalid scopes: send 1 to ${LIMITS.maxScopes} distinct scopes (got ${unique.length})`;
  for (const scope of unique) {
    if (scope.length < 1 || scope.length > LIMITS.maxScopeLength) return `invalid scope ${JSON.stringify(scope.slice(0, 80))}: 1 to ${LIMITS.maxScopeLength} characters`;
    if (!SCOPE_PATTERN.test(scope)) return `invalid scope ${JSON.stringify(scope.slice(0, 80))}: use only lower-case letters, digits and _ : . -`;
  }
  return null;
}

/** A step-up action: 1 to 200 printable characters, shown to the owner as written. */
export function checkAction(action: string): string {
  const problem = actionProblem(action);
  if (problem !== null) throw badRequest(problem);
  return action;
}

/** What is wrong with a step-up action, or null. */
export function actionProblem(action: string): string | null {
  return isValidAction(action) ? null : `invalid action: 1 to ${LIMITS.actionMaxLength} printable characters (no control or invisible characters)`;
}

/**
 * What the owner approves may only narrow what was asked: every chosen item must have been
 * requested. Duplicates collapse. Throws 400 naming the first item that would widen the request.
 */
export function narrowTo(what: 'scopes' | 'user_info', requested: readonly string[], chosen: readonly string[] | undefined): string[] {
  if (chosen === undefined) return [...requested];
  const out = [...new Set(chosen)];
  const extra = out.find((item) => !requested.includes(item));
  if (extra !== undefined) {
    throw badRequest(`${what} may only narrow the request: ${JSON.stringify(extra.slice(0, 80))} was not asked for; the agent must send a new request for more`);
  }
  if (what === 'scopes' && out.length === 0) throw badRequest('approve at least one scope, or deny the request');
  return out;
}
