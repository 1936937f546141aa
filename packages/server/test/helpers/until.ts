/**
 * Bounded waiting for the tests that run real processes (servers, shops, agents): they poll for a
 * state instead of sleeping a guessed time, and a wait that never ends fails with what it waited
 * for. None of them asserts a speed: the bound only keeps a broken run from hanging the suite.
 */

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface UntilOptions {
  /** How long to wait at the most; 30 s unless set. */
  ms?: number;
  /** Time between two checks; 100 ms unless set. */
  everyMs?: number;
  /** Added to the timeout message: what the last check saw, logs of the processes. */
  describe?: () => string;
}

/** Checks until `check` gives a value other than undefined and returns it; throws after `opts.ms`. */
export async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, opts: UntilOptions = {}): Promise<T> {
  const ms = opts.ms ?? 30_000;
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${opts.describe ? `: ${opts.describe()}` : ''}`);
    await sleep(opts.everyMs ?? 100);
  }
}
