import type { Clock } from '../../src/clock.ts';

/** A clock that only moves when told to (or when the code under test sleeps). */
export class FakeClock implements Clock {
  readonly sleeps: number[] = [];
  constructor(public t = 1_700_000_000_000) {}
  now(): number {
    return this.t;
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    this.sleeps.push(ms);
    this.t += ms;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}
