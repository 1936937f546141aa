import { PASS_TYP } from '@mandate/protocol';
import type { SigningKeys } from '../../crypto/signing-keys.ts';
import { randomToken, sha256Hex } from '../../crypto/random.ts';
import type { Store } from '../../store/ports/index.ts';
import type { Agents } from '../agents/agents.ts';
import type { Clock } from '../../clock.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { rateLimited } from '../errors.ts';
import { assertGrantUsable, refreshInvalid } from './grant-usability.ts';
import { passClaims, passTimes } from './pass-claims.ts';

/** interface.md "Limits": token requests, 60 per site per minute per agent. */
export const TOKEN_RATE = { limit: 60, windowSec: 60 } as const;

export interface TokenRequest {
  agentId: string;
  site: string;
  agentJwt: string;
  refreshToken?: string | undefined;
  ip?: string | null;
}

export interface IssuedPass {
  accessToken: string;
  expiresIn: number;
  refreshToken: string;
  scope: string[];
  /** Epoch ms or null. */
  grantExpiresAt: number | null;
  grantUsesLeft: number | null;
}

export interface PassesDeps {
  store: Store;
  keys: SigningKeys;
  clock: Clock;
  agents: Agents;
  limiter: RateLimiter;
  issuer: string;
}

/**
 * `POST /api/v1/token`: authenticate the agent, find its grant for the site, then count the call,
 * spend one use and rotate the refresh token in ONE commit (Store.commitPassIssuance), and only then
 * sign (with a key made ready before the commit, so that nothing is spent when no key can be read).
 * Of concurrent callers holding the same refresh token exactly one gets a pass.
 *
 * Commits: the rate counter, the compare-and-set and the `pass.issued` record commit together (a use
 * is never spent without its record, no record exists for a lost race, and a 429 writes only the
 * counter), in a group commit shared with the issuances running at the same time. A call refused
 * before that (no usable grant) still counts against the limit, on its own.
 */
export class Passes {
  constructor(private readonly d: PassesDeps) {}

  async issue(req: TokenRequest): Promise<IssuedPass> {
    const agent = await this.d.agents.verifyJwt(req.agentJwt, req.agentId);
    // Host names are case-insensitive and grants store them lower-cased (request-rules normalizeSite).
    const site = req.site.toLowerCase();
    // Counted after authentication, so nobody but the agent can use up its budget.
    const rateKey = `token:${agent.id}:${site}`;

    const now = this.d.clock.now();
    const withoutRefresh = req.refreshToken === undefined;
    const grant = await this.d.store.grants.activeFor(agent.id, site);
    try {
      assertGrantUsable(grant, now, withoutRefresh);
    } catch (refusal) {
      // Refused calls count too, and a call over the limit is told so first.
      await this.d.limiter.check(rateKey, TOKEN_RATE.limit, TOKEN_RATE.windowSec);
      throw refusal;
    }

    // The signing key is made ready before anything is spent: a key that cannot be read (a wrong
    // KEY_ENCRYPTION_KEY, a database error) fails the call while the refresh token still works. So
    // is the owner's record, for a grant that discloses user-info fields (pass-claims.ts).
    const [sign, owner] = await Promise.all([this.d.keys.signer(), grant.userInfo.length > 0 ? this.d.store.users.byId(grant.userId) : undefined]);
    const refreshToken = randomToken();
    const { iat, exp } = passTimes(grant, now);
    const outcome = await this.d.store.commitPassIssuance({
      grantId: grant.id,
      now,
      newRefreshHash: sha256Hex(refreshToken),
      expectedRefreshHash: req.refreshToken === undefined ? undefined : sha256Hex(req.refreshToken),
      rate: { key: rateKey, windowMs: TOKEN_RATE.windowSec * 1000, limit: TOKEN_RATE.limit },
      // `uses_left` (after this pass) is added by the store, from the grant as the commit left it.
      record: { detail: { grant: grant.id, expires_in: exp - iat, refreshed: !withoutRefresh }, ip: req.ip ?? null, createdAt: now },
    });
    if (outcome.kind === 'limited') throw rateLimited((outcome.resetAt - now) / 1000);
    if (outcome.kind === 'refused') {
      // Lost a race or held a stale refresh token: say which, from the grant as it is now.
      assertGrantUsable(await this.d.store.grants.byId(grant.id), now, withoutRefresh);
      throw refreshInvalid();
    }

    const updated = outcome.grant;
    // The fields as the commit left them (a narrowing only removes some); read again in the one
    // case the grant disclosed none before the commit.
    const user = updated.userInfo.length === 0 ? undefined : (owner ?? (await this.d.store.users.byId(updated.userId)));
    const claims = passClaims({ issuer: this.d.issuer, agent, grant: updated, user, now, jti: randomToken(16), revSeq: outcome.revSeq });
    // Signed after the commit, with the key made ready before it (signing only computes now).
    const accessToken = await sign(claims, PASS_TYP);
    return {
      accessToken,
      expiresIn: claims.exp - claims.iat,
      refreshToken,
      scope: claims.scope,
      grantExpiresAt: updated.expiresAt,
      grantUsesLeft: updated.usesLeft,
    };
  }
}
