/**
 * The streams each client holds on this node, under one kind of key (client-address.ts: the address,
 * or the IPv6 /48), against that kind's share (REVOCATION_MAX_STREAMS_PER_ADDRESS, _PER_NETWORK): so
 * one party cannot take every stream of a node and leave the other sites polling.
 *
 * A key is dropped when its count comes back to zero: the map only ever holds the clients with a
 * stream open or opening, so it stays within the node's cap however many addresses come and go.
 */
export class StreamShares {
  private readonly held = new Map<string, number>();

  constructor(readonly share: number) {}

  /** Whether `key` holds its share already. No key (an IPv4 client has no network) is never full. */
  full(key: string | undefined): boolean {
    return key !== undefined && (this.held.get(key) ?? 0) >= this.share;
  }

  take(key: string | undefined): void {
    if (key === undefined) return;
    this.held.set(key, (this.held.get(key) ?? 0) + 1);
  }

  give(key: string | undefined): void {
    if (key === undefined) return;
    const left = (this.held.get(key) ?? 0) - 1;
    if (left > 0) this.held.set(key, left);
    else this.held.delete(key);
  }

  /** Keys holding at least one stream. */
  get holders(): number {
    return this.held.size;
  }
}
