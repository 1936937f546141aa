import { batched } from '../batching.ts';

/**
 * Group commit of compare-and-set writes (pass issuances, sign-in rotations): every item that
 * arrives while the event loop is busy, or while the previous commit is under way, goes into the
 * next one. N concurrent writes then cost one transaction and one flush to disk (SQLite) or one
 * statement and one WAL flush (PostgreSQL) instead of N.
 *
 * Items sharing a key (`keysOf`: the row they compare-and-set, a rate counter) never share a step:
 * they go into successive steps, in the order they came, so each is decided after the one before it
 * has been applied: one winner, exact counts. A batch is answered when its last step is committed; a
 * step that fails fails each of its callers (and the later steps are not run).
 */
export function batchedInSteps<Q, A>(run: (step: Q[]) => Promise<A[]>, keysOf: (q: Q) => readonly string[], what: string): (q: Q) => Promise<A> {
  const commit = batched<Q, Settled<A>>(async (items) => {
    const out = new Array<Settled<A>>(items.length);
    let failure: { error: unknown } | undefined;
    for (const step of steps(items, keysOf)) {
      if (failure === undefined) {
        try {
          const answers = await run(step.map((i) => items[i] as Q));
          if (answers.length !== step.length) throw new Error(`${what} answered ${answers.length} outcomes for ${step.length} items`);
          step.forEach((i, k) => (out[i] = { outcome: answers[k] as A }));
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

type Settled<A> = { outcome: A } | { error: unknown };

/** Indexes of `items` in steps whose items share no key, each item after every earlier item sharing one with it. */
export function steps<Q>(items: readonly Q[], keysOf: (q: Q) => readonly string[]): number[][] {
  const out: number[][] = [];
  const lastStep = new Map<string, number>();
  items.forEach((q, i) => {
    const keys = keysOf(q);
    const step = Math.max(-1, ...keys.map((k) => lastStep.get(k) ?? -1)) + 1;
    (out[step] ??= []).push(i);
    for (const k of keys) lastStep.set(k, step);
  });
  return out;
}
