/** How long a filed approval request is continued by an identical call: the life of a step-up request at Mandate. */
export const PENDING_TTL_MS = 5 * 60 * 1000;
/** At most this many open requests are remembered; past it the oldest is forgotten (a later identical call asks anew). */
export const PENDING_MAX = 10_000;

type Entry = { txn: Promise<string>; expiresAt: number };

/**
 * Approval requests filed and not yet answered, by who asked (grant and agent), which tool and which
 * arguments (their digest): an identical call within 5 minutes continues the same request instead
 * of sending the owner a second card. In memory, per process: with several processes behind a
 * balancer, an identical call that lands on another one files a new request (the owner then sees
 * two cards for the same call; each approval is still used once).
 */
export class PendingApprovals {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number) {}

  static key(grantId: string, agentId: string, tool: string, digest: string): string {
    return JSON.stringify([grantId, agentId, tool, digest]);
  }

  /**
   * The request for `key`: the one held, or a new one filed by `file` (concurrent identical calls
   * share one filing). `fresh` tells whether this call filed it.
   */
  open(key: string, file: () => Promise<string>): { txn: Promise<string>; fresh: boolean } {
    const now = this.now();
    const held = this.entries.get(key);
    if (held !== undefined && held.expiresAt > now) return { txn: held.txn, fresh: false };
    this.purge(now);
    const txn = file();
    const entry: Entry = { txn, expiresAt: now + PENDING_TTL_MS };
    this.entries.set(key, entry);
    // A failed filing is not remembered: the next call tries again.
    txn.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return { txn, fresh: true };
  }

  /** The request was answered (approved and used, denied, expired): an identical call asks anew. */
  forget(key: string, txn: Promise<string>): void {
    if (this.entries.get(key)?.txn === txn) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  private purge(now: number): void {
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt <= now) this.entries.delete(key);
    }
    while (this.entries.size >= PENDING_MAX) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
  }
}
