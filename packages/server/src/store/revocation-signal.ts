import { sql } from 'kysely';
import type { CountersRepo, Dialect, RevocationSignal } from './ports/index.ts';
import type { Db } from './repos/db.ts';
import { REV_SEQ_COUNTER } from './repos/pass-issuance.ts';

/** The PostgreSQL channel whose payload is the new rev_seq (decisions §30). */
export const REV_SEQ_CHANNEL = 'mandate_rev_seq';

/** The listeners of one store's signal; `emit` is for the store (after a commit) and the PostgreSQL listener. */
export class RevocationSignalHub implements RevocationSignal {
  private readonly listeners = new Set<(revSeq: number | undefined) => void>();

  subscribe(listener: (revSeq: number | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(revSeq: number | undefined): void {
    for (const l of this.listeners) {
      try {
        l(revSeq);
      } catch { /* a listener's fault is its own: the others still hear */ }
    }
  }
}

/**
 * The counters, telling `advanced` of each new rev_seq. On PostgreSQL the same statement's transaction
 * also queues a NOTIFY, which the server delivers at commit to every node listening (this one too),
 * and drops on rollback: no node hears of a change that did not happen.
 */
export function signallingCounters(counters: CountersRepo, db: Db, dialect: Dialect, advanced: (revSeq: number) => void): CountersRepo {
  return {
    ...counters,
    async next(name) {
      const value = await counters.next(name);
      if (name !== REV_SEQ_COUNTER) return value;
      if (dialect === 'postgres') await sql`select pg_notify(${REV_SEQ_CHANNEL}, ${String(value)})`.execute(db);
      advanced(value);
      return value;
    },
  };
}
