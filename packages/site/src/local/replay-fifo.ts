/**
 * A first-in first-out list whose items may die anywhere (an evicted proof, an agent that got a proof
 * again): dead items are skipped at the front and swept out once they outnumber the live ones, so
 * every operation is O(1) amortised. (A Map or Set used as a queue is not: V8 leaves deleted slots
 * at its front, and finding the first live one there costs O(deleted) on every call.)
 */
export class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  constructor(private readonly alive: (item: T) => boolean) {}

  push(item: T): void {
    this.items.push(item);
  }

  /** The oldest live item, or undefined. */
  peek(): T | undefined {
    while (this.head < this.items.length) {
      const item = this.items[this.head] as T;
      if (this.alive(item)) return item;
      this.head++;
    }
    this.items = [];
    this.head = 0;
    return undefined;
  }

  /** Items held, dead ones included (for tests: memory stays bounded). */
  get length(): number {
    return this.items.length - this.head;
  }

  /** Call after items died elsewhere, with how many live ones remain: sweeps when most are dead. */
  sweep(live: number): void {
    if (this.items.length - this.head <= 2 * live + 32) return;
    this.items = this.items.slice(this.head).filter(this.alive);
    this.head = 0;
  }
}
