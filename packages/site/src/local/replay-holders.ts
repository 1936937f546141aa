/** What HolderCounts files: its position in the list of its count (kept by HolderCounts). */
export type Filed = { slot: number };

/**
 * Which agent holds the most proofs, in O(1): agents are filed in a list per count (removed by
 * swapping with the last, so no list has holes), and counts only ever move by one (a proof
 * recorded, evicted or expired), so the highest non-empty count is found by stepping down at most
 * once. A full cache evicts from this agent, never scanning all of them.
 */
export class HolderCounts<T extends Filed> {
  private readonly byCount: T[][] = [[]];
  private top = 0;

  /** `holder`'s count went from `from` to `from + 1`. */
  increment(holder: T, from: number): void {
    this.move(holder, from, from + 1);
    if (from + 1 > this.top) this.top = from + 1;
  }

  /** `holder`'s count went from `from` to `from - 1` (0: no longer filed). */
  decrement(holder: T, from: number): void {
    this.move(holder, from, from - 1);
    while (this.top > 0 && (this.byCount[this.top]?.length ?? 0) === 0) this.top--;
  }

  /**
   * An agent holding the most proofs, or undefined when none holds any. Of several, the one at the
   * head of the list: filed there early (the swaps keep that roughly), so its proofs tend to be old.
   */
  largest(): T | undefined {
    return this.top === 0 ? undefined : this.byCount[this.top]?.[0];
  }

  private move(holder: T, from: number, to: number): void {
    if (from > 0) {
      const list = this.byCount[from] as T[];
      const last = list.pop() as T;
      if (last !== holder) {
        list[holder.slot] = last;
        last.slot = holder.slot;
      }
    }
    if (to <= 0) return;
    const list = (this.byCount[to] ??= []);
    holder.slot = list.length;
    list.push(holder);
  }
}
