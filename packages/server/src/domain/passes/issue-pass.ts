import { PASS_TYP } from '@mandate/protocol';
import type { SigningKeys } from '../../crypto/signing-keys.ts';
import { randomToken, sha256Hex } from '../../crypto/random.ts';
import type { Store } from '../../store/ports.ts';
import type { Activity } from '../activity/activity.ts';
import type { Agents } from '../agents/agents.ts';
import type { Clock } from '../clock.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { RevocationSequence } from '../revocation/rev-seq.ts';
import { assertGrantUsable, refreshInvalid } from './grant-usability.ts';
import { passClaims } from './pass-claims.ts';

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
  activity: Activity;
  issuer: string;
}

/**
 * `POST /api/v1/token`: authenticate the agent, find its grant for the site, then spend one use and
 * rotate the refresh token in ONE compare-and-set (GrantsRepo.issuePass), and only then sign (with a
 * key made ready before the compare-and-set, so that nothing is spent when no key can be read).
 * Of concurrent callers holding the same refresh token exactly one gets a pass.
 *
 * Commits: the rate counter commits on its own (it must count refused calls too, and a 429 writes
 * nothing else); the compare-and-set and the `pass.issued` record commit together, so a use is
 * never spent without its record and no record exists for a lost race.
 */
export class Passes {
  constructor(private readonly d: PassesDeps) {}

  async issue(req: TokenRequest): Promise<IssuedPass> {
    const agent = await this.d.agents.verifyJwt(req.agentJwt, req.agentId);
    // Host names are case-insensitive and grants store them lower-cased (request-rules normalizeSite).
    const site = req.site.toLowerCase();
    // Counted after authentication, so nobody but the agent can use up its budget.
    await this.d.limiter.check(`token:${agent.id}:${site}`, TOKEN_RATE.limit, TOKEN_RATE.windowSec);

    const now = this.d.clock.now();
    const withoutRefresh = req.refreshToken === undefined;
    const grant = await this.d.store.grants.activeFor(agent.id, site);
    assertGrantUsable(grant, now, withoutRefresh);

    // The signing key is made ready before anything is spent: a key that cannot be read (a wrong
    // KEY_ENCRYPTION_KEY, a database error) fails the call while the refresh token still works.
    const sign = await this.d.keys.signer();
    const refreshToken = randomToken();
    const issued = await this.d.store.transaction(async (repos) => {
      const updated = await repos.grants.issuePass(grant.id, {
        now,
        newRefreshHash: sha256Hex(refreshToken),
        ...(req.refreshToken === undefined ? {} : { expectedRefreshHash: sha256Hex(req.refreshToken) }),
      });
      // Nothing was written: the transaction commits empty and the caller learns why below.
      if (!updated) return undefined;
      // Read through `repos` (this transaction's connection), never `this.d.store`: on SQLite the
      // transaction holds the only connection, so a read outside it would wait for it forever.
      const [user, revSeq] = await Promise.all([repos.users.byId(updated.userId), new RevocationSequence(repos.counters).current()]);
      const claims = passClaims({ issuer: this.d.issuer, agent, grant: updated, user, now, jti: randomToken(16), revSeq });
      // Last in the transaction: the record takes the owner's sequence row, shared by all of the
      // owner's agents, so that lock is held only for the commit.
      await this.d.activity.record({
        userId: updated.userId,
        action: 'pass.issued',
        agentId: agent.id,
        site: updated.site,
        detail: { grant: updated.id, expires_in: claims.exp - claims.iat, uses_left: updated.usesLeft, refreshed: !withoutRefresh },
        ip: req.ip ?? null,
      }, repos.activity);
      return { updated, claims };
    });
    if (!issued) {
      // Lost a race or held a stale refresh token: say which, from the grant as it is now.
      assertGrantUsable(await this.d.store.grants.byId(grant.id), now, withoutRefresh);
      throw refreshInvalid();
    }

    // Signed after the commit, with the key made ready before it (signing only computes now); the
    // claims are fixed already.
    const { updated, claims } = issued;
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
