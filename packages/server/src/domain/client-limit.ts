import { clientKeys } from './client-address.ts';
import type { RateLimiter } from './rate-limit.ts';

/**
 * A fixed-window limit per client (client-address.ts): `perAddress` for one IPv4 address or IPv6
 * /64, and, where a limit has one, `perNetwork` for the IPv6 /48 around it, higher, so one site's
 * 65,536 /64s share a budget while a few neighbours in it do not feel it.
 */
export interface ClientLimit {
  perAddress: number;
  perNetwork?: number;
  windowSec: number;
}

/**
 * Counts one call of `name` (e.g. `signup`) from `clientAddress` under `name:addr:<key>` and, with
 * `perNetwork`, `name:net:<key>`; throws 429 with Retry-After once either is passed.
 */
export async function checkClient(limiter: RateLimiter, name: string, clientAddress: string, limit: ClientLimit): Promise<void> {
  const keys = clientKeys(clientAddress);
  await limiter.check(`${name}:addr:${keys.address}`, limit.perAddress, limit.windowSec);
  if (limit.perNetwork !== undefined && keys.network !== undefined) await limiter.check(`${name}:net:${keys.network}`, limit.perNetwork, limit.windowSec);
}
