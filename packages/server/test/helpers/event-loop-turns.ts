/**
 * Counts how often the event loop turns while `work` runs: work that must leave the loop free (long
 * builds done in steps) lets this counter grow; work that holds the loop keeps it near zero.
 */
export async function countLoopTurns<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let spinning = true;
  const spin = (): void => {
    if (!spinning) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  try {
    const result = await work();
    return { result, turns };
  } finally {
    spinning = false;
  }
}
