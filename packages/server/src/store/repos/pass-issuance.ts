import type { Kysely } from 'kysely';
import type { Dialect, PassIssuance, PassIssuanceBatch, PassIssuanceOutcome } from '../ports/index.ts';
import type { Database } from '../schema.ts';
import { activityRepo } from './activity.ts';
import { countersRepo } from './counters.ts';
import { grantsRepo } from './grants.ts';
import { rateCountersRepo } from './rate-counters.ts';

/** The counter `rev_seq` (domain/revocation/rev-seq.ts) that every pass carries. */
export const REV_SEQ_COUNTER = 'rev_seq';

/** What the `pass.issued` record's detail holds: the caller's fields and the grant's uses left after the pass. */
export const issuedDetail = (q: PassIssuance, usesLeft: number | null): Record<string, unknown> => ({ ...q.record.detail, uses_left: usesLeft });

/**
 * Pass issuances through the repositories, one Kysely transaction per batch (PassIssuanceBatch): the
 * reference the dialects' own implementations follow (sqlite/pass-issuance.ts,
 * postgres/pass-issuance.ts), and the one used where they are not (an in-memory SQLite database).
 */
export function kyselyPassIssuance(db: Kysely<Database>, dialect: Dialect): PassIssuanceBatch {
  return (batch) =>
    db.transaction().execute(async (trx) => {
      const rates = rateCountersRepo(trx);
      const grants = grantsRepo(trx);
      const activity = activityRepo(trx, dialect);
      let revSeq: number | undefined;
      const out: PassIssuanceOutcome[] = [];
      for (const q of batch) {
        const { count, resetAt } = await rates.hit(q.rate.key, q.rate.windowMs, q.now);
        if (count > q.rate.limit) {
          out.push({ kind: 'limited', resetAt });
          continue;
        }
        const grant = await grants.issuePass(q.grantId, { now: q.now, newRefreshHash: q.newRefreshHash, ...(q.expectedRefreshHash === undefined ? {} : { expectedRefreshHash: q.expectedRefreshHash }) });
        if (!grant) {
          out.push({ kind: 'refused' });
          continue;
        }
        revSeq ??= await countersRepo(trx).current(REV_SEQ_COUNTER);
        await activity.add({ userId: grant.userId, action: 'pass.issued', agentId: grant.agentId, site: grant.site, detail: issuedDetail(q, grant.usesLeft), ip: q.record.ip, createdAt: q.record.createdAt });
        out.push({ kind: 'issued', grant, revSeq });
      }
      return out;
    });
}
