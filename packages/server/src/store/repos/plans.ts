import type { Selectable } from 'kysely';
import type { PlanRecord, PlanStatus, PlanStepRecord, PlanStepState, PlansRepo } from '../ports/index.ts';
import type { PlanStepsTable, PlansTable } from '../schema.ts';
import { type Db, affected, fromBool, numOrNull, toBool } from './db.ts';

const toStep = (r: Selectable<PlanStepsTable>): PlanStepRecord => ({
  id: r.step_id,
  position: Number(r.position),
  url: r.url,
  host: r.host,
  path: r.path,
  button: r.button,
  category: r.category,
  textDigests: JSON.parse(r.text_digests) as string[],
  after: JSON.parse(r.after_ids) as string[],
  uses: Number(r.uses),
  usesLeft: Number(r.uses_left),
  approved: toBool(Number(r.approved)),
  state: r.state as PlanStepState,
  reason: r.reason,
});

const toPlan = (r: Selectable<PlansTable>, steps: PlanStepRecord[]): PlanRecord => ({
  id: r.id,
  userId: r.user_id,
  agentId: r.agent_id,
  txnId: r.txn_id,
  title: r.title,
  startAt: Number(r.start_at),
  endAt: Number(r.end_at),
  status: r.status as PlanStatus,
  createdAt: Number(r.created_at),
  decidedAt: numOrNull(r.decided_at),
  steps,
});

export function plansRepo(db: Db): PlansRepo {
  /** The plans with their steps (one query for all steps), keeping the plans' order. */
  async function withSteps(rows: Selectable<PlansTable>[]): Promise<PlanRecord[]> {
    if (rows.length === 0) return [];
    const steps = await db.selectFrom('plan_steps').selectAll().where('plan_id', 'in', rows.map((r) => r.id)).orderBy('position').execute();
    return rows.map((r) => toPlan(r, steps.filter((s) => s.plan_id === r.id).map(toStep)));
  }

  return {
    async create(p) {
      await db
        .insertInto('plans')
        .values({ id: p.id, user_id: p.userId, agent_id: p.agentId, txn_id: p.txnId, title: p.title, start_at: p.startAt, end_at: p.endAt, status: p.status, created_at: p.createdAt, decided_at: p.decidedAt })
        .execute();
      await db
        .insertInto('plan_steps')
        .values(p.steps.map((s) => ({
          plan_id: p.id, step_id: s.id, position: s.position, url: s.url, host: s.host, path: s.path, button: s.button, category: s.category,
          text_digests: JSON.stringify(s.textDigests), after_ids: JSON.stringify(s.after), uses: s.uses, uses_left: s.usesLeft, approved: fromBool(s.approved), state: s.state, reason: s.reason,
        })))
        .execute();
    },
    async byId(id) {
      const r = await db.selectFrom('plans').selectAll().where('id', '=', id).executeTakeFirst();
      return r && (await withSteps([r]))[0];
    },
    async byTxnId(txnId) {
      const r = await db.selectFrom('plans').selectAll().where('txn_id', '=', txnId).executeTakeFirst();
      return r && (await withSteps([r]))[0];
    },
    async list(filter, endedAfter, limit) {
      let q = db.selectFrom('plans').selectAll().where('user_id', '=', filter.userId);
      if (filter.agentId !== undefined) q = q.where('agent_id', '=', filter.agentId);
      const rows = await q.where('end_at', '>=', endedAfter).orderBy('start_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return withSteps(rows);
    },
    async activeForAgent(agentId, now) {
      const rows = await db.selectFrom('plans').selectAll().where('agent_id', '=', agentId).where('status', '=', 'approved').where('start_at', '<=', now).where('end_at', '>', now).orderBy('start_at').orderBy('id').execute();
      return withSteps(rows);
    },
    async transition(id, from, to, now, approvedSteps) {
      const r = await db.updateTable('plans').set({ status: to, decided_at: now }).where('id', '=', id).where('status', 'in', from).executeTakeFirst();
      if (affected(r) !== 1) return false;
      if (approvedSteps && approvedSteps.length > 0) {
        await db.updateTable('plan_steps').set({ approved: 1 }).where('plan_id', '=', id).where('step_id', 'in', approvedSteps).execute();
      }
      return true;
    },
    async takeUse(planId, stepId, now) {
      // One conditional UPDATE: the plan must still be approved and inside its window, the step
      // approved with a use left. Racing callers each take one use; none takes more than are left.
      const r = await db
        .updateTable('plan_steps')
        .set((eb) => ({ uses_left: eb('uses_left', '-', 1), state: 'running', reason: null }))
        .where('plan_id', '=', planId)
        .where('step_id', '=', stepId)
        .where('approved', '=', 1)
        .where('uses_left', '>', 0)
        .where((eb) =>
          eb.exists(
            eb.selectFrom('plans').select('plans.id').where('plans.id', '=', planId).where('plans.status', '=', 'approved').where('plans.start_at', '<=', now).where('plans.end_at', '>', now),
          ),
        )
        .executeTakeFirst();
      return affected(r) === 1;
    },
    async recordUse(txnId, planId, stepId, now) {
      await db.insertInto('plan_uses').values({ txn_id: txnId, plan_id: planId, step_id: stepId, created_at: now }).execute();
    },
    async useByTxn(txnId) {
      const r = await db.selectFrom('plan_uses').select(['plan_id', 'step_id']).where('txn_id', '=', txnId).executeTakeFirst();
      return r && { planId: r.plan_id, stepId: r.step_id };
    },
    async setStepState(planId, stepId, state, reason) {
      return affected(await db.updateTable('plan_steps').set({ state, reason }).where('plan_id', '=', planId).where('step_id', '=', stepId).executeTakeFirst()) === 1;
    },
    async deleteForUser(userId) {
      const ids = (await db.selectFrom('plans').select('id').where('user_id', '=', userId).execute()).map((r) => r.id);
      if (ids.length === 0) return 0;
      await db.deleteFrom('plan_steps').where('plan_id', 'in', ids).execute();
      await db.deleteFrom('plan_uses').where('plan_id', 'in', ids).execute();
      return affected(await db.deleteFrom('plans').where('user_id', '=', userId).executeTakeFirst());
    },
  };
}
