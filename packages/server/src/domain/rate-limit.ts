import type { RateCountersRepo } from '../store/ports/index.ts';
import type { Clock } from '../clock.ts';
import { rateLimited } from './errors.ts';

/**
 * Fixed-window limits counted in the shared store, so they hold across nodes.
 * `check` counts the call and throws 429 (with Retry-After) once `limit` is passed.
 */
export class RateLimiter {
  constructor(private readonly counters: RateCountersRepo, private readonly clock: Clock) {}

  async check(key: string, limit: number, windowSec: number): Promise<void> {
    const now = this.clock.now();
    const { count, resetAt } = await this.counters.hit(key, windowSec * 1000, now);
    if (count > limit) throw rateLimited((resetAt - now) / 1000);
  }
}
