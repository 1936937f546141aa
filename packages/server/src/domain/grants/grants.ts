import type { GrantRecord, Repos, Store } from '../../store/ports/index.ts';
import type { Activity } from '../activity/activity.ts';
import type { Clock } from '../../clock.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import { looksLikeId } from '../ids.ts';
import { RevocationSequence } from '../revocation/rev-seq.ts';
import { isKnownUserInfoField, unknownUserInfoField } from '../user-info.ts';
import { isGrantLive } from './usable.ts';

/**
 * Grants: what an owner approved for one agent at one site. Created by an approval
 * (grant-from-approval.ts); here the owner lists, revokes and narrows them. Which grant an agent
 * may use now is usable.ts.
 */
/**
 * A page of the owner's live grants (GET /api/grants): `limit` from `offset`, newest first. The
 * default page is also the most one answer carries, so `grants` of GET /api/me is capped by it. An
 * owner reaches it only with many agents at the same sites: live sites are limited to 500
 * (QUOTAS.liveSitesPerOwner), and every grant took a passkey approval.
 */
export const GRANTS_PAGE = { default: 500, max: 500 } as const;

/** Runs inside the transaction that revokes a grant (OIDC sign-ins on it end there). */
export type GrantRevokedHook = (repos: Repos, grant: GrantRecord, now: number) => Promise<void>;

export class Grants {
  private readonly revokedHooks: GrantRevokedHook[] = [];
  constructor(private readonly store: Store, private readonly clock: Clock, private readonly activity: Activity) {}

  onRevoked(hook: GrantRevokedHook): void {
    this.revokedHooks.push(hook);
  }

  /** The owner's active, unexpired grants, newest first: one page (by default the first GRANTS_PAGE.default). */
  async listLive(userId: string, page: { offset?: number; limit?: number } = {}): Promise<GrantRecord[]> {
    const now = this.clock.now();
    const offset = page.offset ?? 0;
    const limit = Math.min(page.limit ?? GRANTS_PAGE.default, GRANTS_PAGE.max);
    return (await this.store.grants.listActiveForUser(userId)).filter((g) => isGrantLive(g, now)).slice(offset, offset + limit);
  }

  /** The owner's grant, or 404 alike for unknown ids and other owners' grants. */
  async owned(userId: string, grantId: string): Promise<GrantRecord> {
    const grant = looksLikeId('gr', grantId) ? await this.store.grants.byId(grantId) : undefined;
    if (!grant || grant.userId !== userId) throw notFound('grant not found');
    return grant;
  }

  /**
   * Revokes at a new `rev_seq` (it appears in the revocation list from then on). Only an active
   * grant can be revoked: 409 otherwise. The sequence advances in the same transaction, so a lost
   * race leaves no gap in the list's meaning.
   */
  async revoke(userId: string, grantId: string, ip: string | null = null): Promise<{ revSeq: number }> {
    const grant = await this.owned(userId, grantId);
    const now = this.clock.now();
    return this.store.transaction(async (repos) => {
      const revSeq = await new RevocationSequence(repos.counters).advance();
      if (!(await repos.grants.revoke(grant.id, now, revSeq))) throw conflict(`grant is not active (it is ${grant.status === 'active' ? 'already revoked' : grant.status})`);
      for (const hook of this.revokedHooks) await hook(repos, grant, now);
      await this.activity.record({ userId, action: 'grant.revoked', agentId: grant.agentId, site: grant.site, detail: { grant_id: grant.id, rev_seq: revSeq }, ip }, repos.activity);
      return { revSeq };
    });
  }

  /**
   * Inside the caller's transaction: revokes every active grant of the owner created at or after
   * `since`, all at one new `rev_seq` (the revoked hooks run for each, so OIDC sign-ins on them
   * end). Used by the first passkey's undo: every grant since then was approved through that trust.
   * Answers the grants revoked.
   */
  async revokeCreatedSince(repos: Repos, userId: string, since: number, now: number, ip: string | null): Promise<GrantRecord[]> {
    const recent = (await repos.grants.listActiveForUser(userId)).filter((g) => g.createdAt >= since);
    if (recent.length === 0) return [];
    const revSeq = await new RevocationSequence(repos.counters).advance();
    const revoked: GrantRecord[] = [];
    for (const grant of recent) {
      if (!(await repos.grants.revoke(grant.id, now, revSeq))) continue;
      for (const hook of this.revokedHooks) await hook(repos, grant, now);
      await this.activity.record({ userId, action: 'grant.revoked', agentId: grant.agentId, site: grant.site, detail: { grant_id: grant.id, rev_seq: revSeq, reason: 'passkey_undone' }, ip }, repos.activity);
      revoked.push(grant);
    }
    return revoked;
  }

  /**
   * Narrows (or clears) the user-info fields a grant discloses. Widening is refused with 400: new
   * fields need a fresh approval on the owner's phone. Takes effect with the next pass; passes
   * already issued keep their snapshot until they expire.
   */
  async narrowUserInfo(userId: string, grantId: string, fields: readonly string[], ip: string | null = null): Promise<GrantRecord> {
    const grant = await this.owned(userId, grantId);
    if (grant.status !== 'active') throw conflict(`grant is not active (it is ${grant.status})`);
    const next = [...new Set(fields)];
    for (const name of next) {
      if (!isKnownUserInfoField(name)) throw unknownUserInfoField(name);
      if (!grant.userInfo.includes(name)) {
        throw badRequest(`cannot add ${name}: a grant's user_info can only be narrowed or cleared here; adding a field needs a fresh approval on the phone (the agent sends a new access request)`);
      }
    }
    // Keep the grant's own order so the stored list stays a true subset as written.
    const narrowed = grant.userInfo.filter((name) => next.includes(name));
    if (!(await this.store.grants.setUserInfo(grant.id, narrowed, grant.userInfo))) {
      throw conflict('the grant changed while you were editing it; reload and try again');
    }
    await this.activity.record({ userId, action: 'grant.user_info_narrowed', agentId: grant.agentId, site: grant.site, detail: { grant_id: grant.id, from: grant.userInfo, to: narrowed }, ip });
    return { ...grant, userInfo: narrowed };
  }
}
