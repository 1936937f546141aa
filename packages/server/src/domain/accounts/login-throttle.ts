import { sha256Hex } from '../../crypto/random.ts';
import type { RateCountersRepo } from '../../store/ports/index.ts';
import { clientKeys } from '../client-address.ts';
import type { Clock } from '../../clock.ts';
import { rateLimited } from '../errors.ts';

export interface LoginLimits {
  /** Attempts at one account per window that did not succeed, before the account counts as under attack. */
  perAccount: number;
  /** Attempts from one client (IPv4 address or IPv6 /64) per window (at any accounts) that did not succeed; then 429. */
  perAddress: number;
  windowSec: number;
}

/**
 * An IPv6 /48 may fail this many times the per-address limit per window (200 in 15 minutes by
 * default), then every address in it is refused. A site's /48 holds 65,536 /64s: without this it
 * would get 65,536 times the per-address allowance for spraying guesses across accounts. Four /64s
 * of one /48 still fail their full allowance each before their neighbours feel it.
 */
export const NETWORK_FACTOR = 4;

/** An attempt the throttle let through; `succeeded()` takes it back out of the counts. */
export interface LoginAttempt {
  succeeded(): Promise<void>;
}

/**
 * Password sign-in throttling that never locks the real owner out (decisions §25).
 *
 * Fixed-window counters in the shared store, so they hold across nodes: per client address, per
 * account, per (account, address), and per IPv6 /48. A "client address" is an IPv4 address or an
 * IPv6 /64 (client-address.ts): an IPv6 client holds a whole /64 and would otherwise get a fresh
 * allowance per address it can spell. Every attempt is counted BEFORE the password is checked
 * (one atomic increment each, so a burst of concurrent requests cannot slip past a limit) and a
 * successful sign-in takes its count back: what remains are the attempts that did not succeed.
 *
 * - An address over its limit is refused, whichever account it tries: one address cannot guess at
 *   many accounts. So is every address of an IPv6 /48 over NETWORK_FACTOR times that limit.
 * - Once an account is over its limit, an address that already failed at it in this window is
 *   refused, while an address with no failure at it still gets one attempt: guessing from many
 *   addresses stays one guess per address per window, and the owner, at home, still signs in.
 *
 * A success also clears the (account, address) count, so the owner's earlier typos do not count
 * against them if the account comes under attack later in the window. It does not clear the account
 * or address counts: other people's failures there stay counted.
 *
 * The same counters are kept for an email nobody has, so the answers (and their timing) do not tell
 * whether an account exists.
 */
export class LoginThrottle {
  constructor(private readonly counters: RateCountersRepo, private readonly clock: Clock, private readonly limits: LoginLimits) {}

  /** Counts an attempt at `email` (normalized) from `address`, or throws 429 with `retry_after`. */
  async admit(email: string, address: string): Promise<LoginAttempt> {
    const at = this.clock.now();
    const windowMs = this.limits.windowSec * 1000;
    const account = sha256Hex(email);
    const client = clientKeys(address);
    const keys = { address: `login:addr:${client.address}`, account: `login:acct:${account}`, pair: `login:pair:${account}:${client.address}` };
    const network = client.network === undefined ? undefined : `login:net:${client.network}`;

    const byAddress = await this.counters.hit(keys.address, windowMs, at);
    if (byAddress.count > this.limits.perAddress) throw rateLimited((byAddress.resetAt - at) / 1000);
    if (network !== undefined) {
      const byNetwork = await this.counters.hit(network, windowMs, at);
      if (byNetwork.count > NETWORK_FACTOR * this.limits.perAddress) throw rateLimited((byNetwork.resetAt - at) / 1000);
    }
    const [byAccount, byPair] = await Promise.all([this.counters.hit(keys.account, windowMs, at), this.counters.hit(keys.pair, windowMs, at)]);
    // byPair counts this attempt: above 1, this address already tried this account in the window and did not succeed.
    if (byAccount.count > this.limits.perAccount && byPair.count > 1) throw rateLimited((byAccount.resetAt - at) / 1000);

    return {
      succeeded: async () => {
        await Promise.all([
          this.counters.release(keys.address, windowMs, at),
          this.counters.release(keys.account, windowMs, at),
          this.counters.clear(keys.pair),
          ...(network === undefined ? [] : [this.counters.release(network, windowMs, at)]),
        ]);
      },
    };
  }
}
