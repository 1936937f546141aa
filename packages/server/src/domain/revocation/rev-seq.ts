import type { CountersRepo } from '../../store/ports/index.ts';

const NAME = 'rev_seq';

/** The revocation sequence: a counter in the shared store that only grows (decisions §5). */
export class RevocationSequence {
  constructor(private readonly counters: CountersRepo) {}
  advance(): Promise<number> {
    return this.counters.next(NAME);
  }
  current(): Promise<number> {
    return this.counters.current(NAME);
  }
}
