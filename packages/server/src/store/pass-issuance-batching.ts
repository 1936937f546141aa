import type { PassIssuance, PassIssuanceBatch, PassIssuanceOutcome } from './ports/index.ts';
import { batched } from '../batching.ts';

/**
 * Group commit of pass issuances (Store.commitPassIssuance), as cloud verify's jtis are
 * (single-use-batching.ts): every issuance that arrives while the event loop is busy, or while the
 * previous commit is under way, goes into the next one. N concurrent issuances then cost one
 * transaction and one flush to disk (SQLite) or one statement and one WAL flush (PostgreSQL) instead
 * of N, and the owner's activity counter row is locked once per commit, not once per pass.
 *
 * Items for the same grant or the same rate key (racing calls with one refresh token) never share a
 * step: they go into successive steps, in the order they came, so each is decided after the one
 * before it has been applied: one winner, exact counts. A batch is answered when its last step is
 * committed; a step that fails fails each of its callers (and the later steps are not run).
 */
export function batchingPassIssuance(run: PassIssuanceBatch): (q: PassIssuance) => Promise<PassIssuanceOutcome> {
  const commit = batched<PassIssuance, Settled>(async (items) => {
    const out = new Array<Settled>(items.length);
    let failure: { error: unknown } | undefined;
    for (const step of steps(items)) {
      if (failure === undefined) {
        try {
          const answers = await run(step.map((i) => items[i] as PassIssuance));
          if (answers.length !== step.length) throw new Error(`pass issuance answered ${answers.length} outcomes for ${step.length} items`);
          step.forEach((i, k) => (out[i] = { outcome: answers[k] as PassIssuanceOutcome }));
          continue;
        } catch (error) {
          failure = { error };
        }
      }
      // The failed step and those after it; the steps before it are committed and keep their answers.
      for (const i of step) out[i] = failure;
    }
    return out;
  }, { maxInFlight: 1 });
  return async (q) => {
    const settled = await commit(q);
    if ('error' in settled) throw settled.error;
    return settled.outcome;
  };
}

type Settled = { outcome: PassIssuanceOutcome } | { error: unknown };

/** Indexes of `items` in steps whose items have distinct grants and rate keys, each item after every earlier item sharing one with it. */
export function steps(items: readonly PassIssuance[]): number[][] {
  const out: number[][] = [];
  const lastStep = new Map<string, number>();
  items.forEach((q, i) => {
    const grantKey = `g\u0000${q.grantId}`;
    const rateKey = `r\u0000${q.rate.key}`;
    const step = Math.max(lastStep.get(grantKey) ?? -1, lastStep.get(rateKey) ?? -1) + 1;
    (out[step] ??= []).push(i);
    lastStep.set(grantKey, step);
    lastStep.set(rateKey, step);
  });
  return out;
}
