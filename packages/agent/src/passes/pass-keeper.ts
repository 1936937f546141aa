import { AccessRequiredError, MandateError } from '../client/errors.ts';
import type { ServiceClient } from '../client/http.ts';
import type { TokenAnswer } from '../client/types.ts';
import type { Clock } from '../clock.ts';
import { normalizeSiteId } from '../site-id.ts';
import type { SiteState, StateStore } from '../state/state-store.ts';
import { needsRefresh } from './refresh-policy.ts';

/** A pass ready to send (`Authorization: Bearer <accessToken>`). The refresh token stays in the store. */
export type Pass = {
  site: string;
  accessToken: string;
  /** Epoch ms, by the SDK's clock. */
  expiresAt: number;
  scope: string[];
  grantExpiresAt: string | null;
  grantUsesLeft: number | null;
  /** True when this call fetched a new pass from the service. */
  fetched: boolean;
};

type Deps = { client: ServiceClient; store: StateStore; clock: Clock; agentId: string; agentJwt: () => Promise<string> };

/**
 * Keeps one pass per site: reuses the stored one while it is fresh, else gets a new one with the
 * stored refresh token (or, right after an approval, without one) and stores the rotated refresh
 * token before handing the pass out. Renewals of a site are serialised by the store's lock, and
 * the state is read again under the lock: another process may have renewed it meanwhile.
 */
export class PassKeeper {
  constructor(private readonly d: Deps) {}

  async get(siteId: string, opts: { force?: boolean; signal?: AbortSignal | undefined } = {}): Promise<Pass> {
    const site = normalizeSiteId(siteId);
    const seen = await this.readOwn(site);
    if (seen && !opts.force && !needsRefresh(seen, this.d.clock.now())) return toPass(seen, false);
    return this.d.store.withLock(site, async () => {
      const latest = await this.readOwn(site);
      const renewedMeanwhile = latest !== undefined && latest.accessToken !== seen?.accessToken;
      if (latest && (renewedMeanwhile || !opts.force) && !needsRefresh(latest, this.d.clock.now())) return toPass(latest, false);
      const answer = await this.fetch(site, latest?.refreshToken, opts.signal);
      const now = this.d.clock.now();
      const state: SiteState = {
        agentId: this.d.agentId,
        site,
        accessToken: answer.access_token,
        issuedAt: now,
        expiresAt: now + answer.expires_in * 1000,
        refreshToken: answer.refresh_token,
        scope: answer.scope,
        grantExpiresAt: answer.grant_expires_at,
        grantUsesLeft: answer.grant_uses_left,
      };
      // Stored before use: the refresh token just sent is void, this one is the only way on.
      await this.d.store.write(state);
      return toPass(state, true);
    });
  }

  /** Forgets the site's pass and refresh token (after a new approval they belong to a superseded grant). */
  async forget(siteId: string): Promise<void> {
    const site = normalizeSiteId(siteId);
    await this.d.store.withLock(site, () => this.d.store.remove(site));
  }

  private async readOwn(site: string): Promise<SiteState | undefined> {
    const s = await this.d.store.read(site);
    return s && s.agentId === this.d.agentId && s.site === site ? s : undefined;
  }

  private async fetch(site: string, refreshToken: string | undefined, signal: AbortSignal | undefined): Promise<TokenAnswer> {
    try {
      return await this.tokenCall(site, refreshToken, signal);
    } catch (e) {
      if (!isAccessProblem(e)) throw e;
      if (refreshToken === undefined) return this.accessRequired(site, e);
      // The stored refresh token is void (used, or of a grant a newer approval replaced). Within
      // an hour of an approval the service still issues a pass without one.
      try {
        return await this.tokenCall(site, undefined, signal);
      } catch (again) {
        if (!isAccessProblem(again)) throw again;
        return this.accessRequired(site, again);
      }
    }
  }

  private async accessRequired(site: string, e: MandateError): Promise<never> {
    await this.d.store.remove(site); // its refresh token, if any, is dead
    throw new AccessRequiredError(site, {
      status: e.status,
      detail: e.detail,
      nextStep: e.nextStep ?? `ask the owner for access to ${site} again`,
      method: e.method,
      path: e.path,
      cause: e,
    });
  }

  private async tokenCall(site: string, refreshToken: string | undefined, signal: AbortSignal | undefined): Promise<TokenAnswer> {
    const body = { agent_id: this.d.agentId, site, agent_jwt: await this.d.agentJwt(), ...(refreshToken ? { refresh_token: refreshToken } : {}) };
    const answer = await this.d.client.call<TokenAnswer>('POST', '/api/v1/token', { body, signal });
    if (!isTokenAnswer(answer)) throw new MandateError('service_error', { detail: 'the token answer lacks access_token, refresh_token or expires_in', method: 'POST', path: '/api/v1/token' });
    return answer;
  }
}

/**
 * 401/403 of the token endpoint that a new approval cures: a void refresh token, the one-hour rule,
 * no (more) approved access. Not: a revoked agent, or an agent JWT the service refused.
 */
function isAccessProblem(e: unknown): e is MandateError {
  return e instanceof MandateError && e.code === 'service_error' && (e.status === 401 || e.status === 403) && !/agent_jwt/.test(e.detail);
}

function isTokenAnswer(a: unknown): a is TokenAnswer {
  const t = a as Record<string, unknown> | null;
  return (
    typeof t === 'object' && t !== null &&
    typeof t['access_token'] === 'string' && typeof t['refresh_token'] === 'string' &&
    typeof t['expires_in'] === 'number' && t['expires_in'] > 0 &&
    Array.isArray(t['scope']) &&
    (t['grant_expires_at'] === null || typeof t['grant_expires_at'] === 'string') &&
    (t['grant_uses_left'] === null || typeof t['grant_uses_left'] === 'number')
  );
}

function toPass(s: SiteState, fetched: boolean): Pass {
  return { site: s.site, accessToken: s.accessToken, expiresAt: s.expiresAt, scope: s.scope, grantExpiresAt: s.grantExpiresAt, grantUsesLeft: s.grantUsesLeft, fetched };
}
