import type { SingleUseItem, SingleUseRepo } from './ports/index.ts';
import { type BatchingOptions, batched } from '../batching.ts';

/**
 * Group commit for single-use keys (DPoP jti, step-up tokens): every `consume` that arrives while
 * the event loop is busy, or while earlier statements are still running, is written with the others
 * in ONE multi-row INSERT ... ON CONFLICT (SingleUseRepo.consumeMany), so N verifies cost one
 * statement and one commit (one fsync on SQLite with synchronous=FULL) instead of N (batching.ts).
 *
 * The guarantees of `consume` are kept: the primary key still decides every key on its own, across
 * all nodes (atomic); no caller is answered before the statement holding its key has committed
 * (durable); a failed statement fails every caller in it (no false "first").
 *
 * Entries are taken over once expired against the EARLIEST `now` of the batch: a caller can only be
 * refused (never wrongly admitted) by the few milliseconds that batching adds.
 */
export function batchingSingleUse(repo: SingleUseRepo, o: BatchingOptions = {}): SingleUseRepo {
  const consume = batched<SingleUseItem & { now: number }, boolean>(
    (items) => repo.consumeMany(items, Math.min(...items.map((i) => i.now))),
    o,
  );
  return {
    consume: (namespace, key, expiresAt, now) => consume({ namespace, key, expiresAt, now }),
    consumeMany: (items, now) => repo.consumeMany(items, now),
    release: (namespace, key) => repo.release(namespace, key),
    purgeExpired: (now) => repo.purgeExpired(now),
  };
}
