import { parentPort, workerData } from 'node:worker_threads';
import type { Selectable } from 'kysely';
import type { PassIssuance, PassIssuanceOutcome, SignInRotation } from '../ports/index.ts';
import type { GrantsTable } from '../schema.ts';
import { grantFromRow } from '../repos/grants.ts';
import { ownerSeqCounter } from '../repos/activity.ts';
import { REV_SEQ_COUNTER, issuedDetail } from '../repos/pass-issuance.ts';
import { type CommitReply, type CommitThreadInput, commitConnection, serveCommits } from './commit-thread.ts';
import { type SignInRow, signInRotations } from './sign-in-rotations.ts';

/**
 * The thread that commits pass issuances and OIDC sign-in rotations to the embedded database
 * (sqlite/pass-issuance.ts), on a connection of its own, as verify-worker.ts does for cloud verify's
 * jtis. Each message is one batch of either (a rotation batch: sign-in-rotations.ts):
 * one `BEGIN IMMEDIATE ... COMMIT` with every item's rate counter, grant compare-and-set and
 * `pass.issued` record (the statements of repos/pass-issuance.ts, straight on the driver), the flush
 * of the WAL file to disk, then the answer. The event loop neither waits for the disk nor builds
 * and compiles the five statements per pass through Kysely.
 */

export type PassWorkerInput = CommitThreadInput;

export type PassWorkerRequest = { items: readonly PassIssuance[] } | { rotations: readonly SignInRotation[] };

export type PassWorkerReply = CommitReply<{ outcomes: PassIssuanceOutcome[] } | { rows: (SignInRow | undefined)[] }>;

const input = workerData as PassWorkerInput;
const port = parentPort;
if (port === null) throw new Error('pass-worker.ts runs as a worker thread');

const db = commitConnection(input);
db.pragma('foreign_keys = ON');

// As repos/rate-counters.ts (hit), repos/grants.ts (issuePass), repos/counters.ts and repos/activity.ts (add).
const rateHit = db.prepare<[string, number, number], { count: number }>(
  `INSERT INTO rate_counters (key, window_start, count, expires_at) VALUES (?, ?, 1, ?)
ON CONFLICT (key, window_start) DO UPDATE SET count = rate_counters.count + 1 RETURNING count`,
);
const SPEND = `UPDATE grants SET refresh_hash = ?, passes_issued = passes_issued + 1,
  uses_left = CASE WHEN uses_left IS NULL THEN NULL ELSE uses_left - 1 END
WHERE id = ? AND status = 'active' AND (expires_at IS NULL OR expires_at > ?) AND (uses_left IS NULL OR uses_left > 0)`;
const spend = db.prepare<[string, string, number], Selectable<GrantsTable>>(`${SPEND} RETURNING *`);
const spendRotating = db.prepare<[string, string, number, string], Selectable<GrantsTable>>(`${SPEND} AND refresh_hash = ? RETURNING *`);
const counter = db.prepare<[string], { value: number }>('SELECT value FROM counters WHERE name = ?');
const nextValue = db.prepare<[string], { value: number }>(
  'INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = counters.value + 1 RETURNING value',
);
const record = db.prepare<[string, number, string, string, string, string | null, number]>(
  `INSERT INTO activity (user_id, owner_seq, agent_id, site, action, detail, ip, created_at) VALUES (?, ?, ?, ?, 'pass.issued', ?, ?, ?)`,
);

const rotate = signInRotations(db);

const commit = db.transaction((r: PassWorkerRequest): { outcomes: PassIssuanceOutcome[] } | { rows: (SignInRow | undefined)[] } => {
  if ('rotations' in r) return { rows: rotate(r.rotations) };
  const { items } = r;
  let revSeq: number | undefined;
  const outcomes = items.map((q): PassIssuanceOutcome => {
    const windowStart = q.now - (q.now % q.rate.windowMs);
    const resetAt = windowStart + q.rate.windowMs;
    const hit = rateHit.get(q.rate.key, windowStart, resetAt);
    if (hit === undefined || hit.count > q.rate.limit) return { kind: 'limited', resetAt };
    const row = q.expectedRefreshHash === undefined ? spend.get(q.newRefreshHash, q.grantId, q.now) : spendRotating.get(q.newRefreshHash, q.grantId, q.now, q.expectedRefreshHash);
    if (row === undefined) return { kind: 'refused' };
    const grant = grantFromRow(row);
    revSeq ??= counter.get(REV_SEQ_COUNTER)?.value ?? 0;
    const ownerSeq = nextValue.get(ownerSeqCounter(grant.userId));
    if (ownerSeq === undefined) throw new Error('the owner activity counter answered no value');
    record.run(grant.userId, ownerSeq.value, grant.agentId, grant.site, JSON.stringify(issuedDetail(q, grant.usesLeft)), q.record.ip, q.record.createdAt);
    return { kind: 'issued', grant, revSeq };
  });
  return { outcomes };
});

serveCommits(port, db, input, commit);
