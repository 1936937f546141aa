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
  purgeExpired(now: number): Promise<number>;
}

export interface SingleUseItem {
  namespace: string;
  key: string;
  expiresAt: number;
}
