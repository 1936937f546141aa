/**
 * Account deletion as a list of erasure steps, one per concept (decisions §16). Each step erases what
 * its concept holds for the owner, inside the one transaction of the deletion (`repos`), so a
 * failure in any step leaves the account as it was. Steps are registered in order with
 * `AccountDeletion.addStep`; a repository added later (recovery codes, phone codes, linked
 * identities, password-reset tokens...) brings its own step, usually one `deleteForUser(userId)`.
 */
import type { Repos, UserRecord } from '../../store/ports/index.ts';

export interface ErasureContext {
  /** The deletion's transaction: every write of every step goes through these. */
  repos: Repos;
  /** The account as it was before the deletion started (its email, to find what was keyed by it). */
  user: UserRecord;
  now: number;
}

export interface ErasureStep {
  /** The concept it erases, for logs and tests ("agents", "passkeys", ...). */
  readonly name: string;
  run(ctx: ErasureContext): Promise<void>;
}

/** A step that is one call: `step('recovery-codes', (c) => c.repos.recoveryCodes.deleteForUser(c.user.id))`. */
export function erasureStep(name: string, run: (ctx: ErasureContext) => Promise<unknown>): ErasureStep {
  return { name, run: async (ctx) => void (await run(ctx)) };
}
