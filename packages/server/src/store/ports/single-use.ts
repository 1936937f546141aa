/** Single-use keys (proof jtis, codes): of racing callers on any number of nodes, one wins. Times are epoch ms. */

export interface SingleUseRepo {
  /**
   * Records `key` in `namespace` until `expiresAt`. Returns true for the first caller only: of N
   * concurrent callers on any number of nodes sharing the database, exactly one gets true
   * (INSERT ... ON CONFLICT DO NOTHING on the primary key). An expired entry may be reused.
   */
  consume(namespace: string, key: string, expiresAt: number, now: number): Promise<boolean>;
  /**
   * `consume` for many keys in ONE statement (one commit): answers, in order, whether each item was
   * first. The same guarantee per key as `consume`; a key listed twice is first at most once.
   */
  consumeMany(items: readonly SingleUseItem[], now: number): Promise<boolean[]>;
  /**
   * Gives a key back: its entry is deleted, so it can be consumed again. Only for the caller that
   * consumed it and then found its request refused for a reason the key's owner must not pay for
   * (cloud verify: a proof's jti spent while its signature was still being checked, which failed).
   */
  release(namespace: string, key: string): Promise<void>;
  purgeExpired(now: number): Promise<number>;
}

export interface SingleUseItem {
  namespace: string;
  key: string;
  expiresAt: number;
}
