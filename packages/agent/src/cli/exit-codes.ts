import { MandateError } from '../client/errors.ts';

/**
 * Exit codes of mandate-agent (docs/agents/cli.md):
 *   0 ok; 1 refused, denied or expired (by the service, the owner or the site);
 *   2 usage or local setup error (bad flags, no key yet, key file open to others);
 *   3 the service (or the called site) is unreachable or failing (5xx);
 *   130 interrupted (Ctrl-C) while waiting.
 */
export const EXIT = { ok: 0, refused: 1, usage: 2, unreachable: 3, interrupted: 130 } as const;

/** A mistake in how the CLI was called; printed with a pointer to --help. */
export class UsageError extends Error {
  constructor(message: string, readonly command?: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Ctrl-C while waiting for the owner: the request stays open. */
export class Interrupted extends Error {
  constructor() {
    super('interrupted');
    this.name = 'Interrupted';
  }
}

/** A site (not the service) that did not answer. */
export class SiteUnreachableError extends Error {
  constructor(readonly url: string, cause: unknown) {
    super(`cannot reach ${url}: ${describe(cause)}`, { cause });
    this.name = 'SiteUnreachableError';
  }
}

function describe(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e));
}

export function exitCodeFor(e: unknown): number {
  if (e instanceof UsageError) return EXIT.usage;
  if (e instanceof Interrupted) return EXIT.interrupted;
  if (e instanceof SiteUnreachableError) return EXIT.unreachable;
  if (e instanceof MandateError) {
    if (e.code === 'invalid_input' || e.code === 'key_file') return EXIT.usage;
    if (e.code === 'unreachable' || e.status >= 500) return EXIT.unreachable;
    return EXIT.refused;
  }
  return EXIT.refused;
}
