/**
 * POST /api/account/delete (decisions §16): the owner erases their account. Checks first (the typed
 * email, then the password or a passkey session), then every erasure step in one transaction, so a
 * failure anywhere leaves the account whole. What must reach the outside afterwards (back-channel
 * logouts) was queued in the outbox by the steps and is sent once the transaction commits.
 */
import type { Clock } from '../../clock.ts';
import type { Store } from '../../store/ports/index.ts';
import { type Accounts, type CurrentSession, hasPassword, normalizeEmail } from '../accounts/accounts.ts';
import { badRequest, forbidden } from '../errors.ts';
import type { ErasureStep } from './erasure.ts';
import { PROFILE_STEP } from './erasure-steps.ts';

export interface DeleteAccountInput {
  /** The account's email, typed by the owner. */
  confirm: string;
  password?: string;
}

export const CONFIRM_MISMATCH = "confirm must be this account's email address, typed out in full";
export const PASSWORD_REQUIRED = 'password is required: this account has one';
export const PASSWORD_WRONG = 'password is not correct';
export const PASSKEY_SESSION_REQUIRED = 'an account without a password is deleted from a session signed in with one of its passkeys';
const PASSKEY_NEXT_STEP = 'sign in with one of your passkeys (GET /api/webauthn/login/options, then POST /api/webauthn/login/verify) and repeat this request with that session';

export interface AccountDeletionDeps {
  store: Store;
  clock: Clock;
  accounts: Pick<Accounts, 'confirmPassword'>;
  steps: readonly ErasureStep[];
  /** After the commit: wake the outbox worker so the logouts go at once. */
  afterCommit: () => void;
}

export class AccountDeletion {
  private readonly steps: ErasureStep[];

  constructor(private readonly deps: AccountDeletionDeps) {
    this.steps = [...deps.steps];
  }

  /**
   * The seam for concepts added later: their step runs in the same transaction, before `profile`
   * (which stays last). Names are unique.
   */
  addStep(step: ErasureStep): void {
    if (this.steps.some((s) => s.name === step.name)) throw new Error(`erasure step ${step.name} is registered twice`);
    const at = this.steps.findIndex((s) => s.name === PROFILE_STEP);
    this.steps.splice(at < 0 ? this.steps.length : at, 0, step);
  }

  stepNames(): string[] {
    return this.steps.map((s) => s.name);
  }

  async delete(owner: Pick<CurrentSession, 'user' | 'method'>, input: DeleteAccountInput, clientAddress: string): Promise<void> {
    const { user } = owner;
    // The typed email first: a slip there costs no password attempt.
    if (normalizeEmail(input.confirm) !== user.email) throw badRequest(CONFIRM_MISMATCH);
    if (hasPassword(user)) {
      if (input.password === undefined || input.password === '') throw badRequest(PASSWORD_REQUIRED);
      if (!(await this.deps.accounts.confirmPassword(user, input.password, clientAddress))) throw forbidden(PASSWORD_WRONG);
    } else if (owner.method !== 'passkey') {
      throw forbidden(PASSKEY_SESSION_REQUIRED, { next_step: PASSKEY_NEXT_STEP });
    }
    const now = this.deps.clock.now();
    await this.deps.store.transaction(async (repos) => {
      for (const step of this.steps) await step.run({ repos, user, now });
    });
    this.deps.afterCommit();
  }
}
