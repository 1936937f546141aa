/**
 * Every failure the SDK reports is a `MandateError`, so a caller can catch one class and still tell
 * the cases apart by `code` (stable strings, also printed by the CLI with `--json`) or by subclass.
 * The service's own words (`detail`, `next_step`) are always kept, never replaced by ours.
 */

export type MandateErrorCode =
  /** The service answered with an error status; see `status`, `detail`, `nextStep`. */
  | 'service_error'
  /** The owner removed or blocked this agent (403 `agent revoked by its owner`). */
  | 'agent_revoked'
  /** No pass can be had for the site without a new approval: ask for access again. */
  | 'access_required'
  /** No answer from the service (network error, timeout). */
  | 'unreachable'
  /** The owner said no, the request expired, a step-up could not be collected, or the wait ran out. */
  | 'approval_denied'
  | 'approval_expired'
  | 'approval_consumed'
  | 'approval_undelivered'
  | 'approval_timeout'
  /** The agent's browser runs on its operator's computers and its owner has not turned the password manager on. */
  | 'password_manager_off'
  /** Bad input caught before anything was sent. */
  | 'invalid_input'
  /** The key or state files are missing, malformed or readable by others. */
  | 'key_file'
  /** Another process held the state lock for too long. */
  | 'state_locked';

export type MandateErrorInit = {
  status?: number;
  detail: string;
  nextStep?: string | undefined;
  retryAfter?: number | undefined;
  method?: string | undefined;
  path?: string | undefined;
  cause?: unknown;
};

export class MandateError extends Error {
  readonly code: MandateErrorCode;
  /** HTTP status of the service's answer; 0 when there was no answer. */
  readonly status: number;
  /** The service's `detail` (or our description when there was no answer). */
  readonly detail: string;
  /** The service's `next_step`, when it gave one. */
  readonly nextStep: string | undefined;
  /** Seconds to wait, from a 429's `Retry-After`. */
  readonly retryAfter: number | undefined;
  readonly method: string | undefined;
  readonly path: string | undefined;

  constructor(code: MandateErrorCode, init: MandateErrorInit) {
    const where = init.method && init.path ? `${init.method} ${init.path}: ` : '';
    const status = init.status ? `${init.status} ` : '';
    const next = init.nextStep ? ` (next step: ${init.nextStep})` : '';
    super(`${where}${status}${init.detail}${next}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'MandateError';
    this.code = code;
    this.status = init.status ?? 0;
    this.detail = init.detail;
    this.nextStep = init.nextStep;
    this.retryAfter = init.retryAfter;
    this.method = init.method;
    this.path = init.path;
  }

  /** A plain object for logs and `--json` output; never holds a secret (none is ever put in). */
  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      ...(this.status ? { status: this.status } : {}),
      detail: this.detail,
      ...(this.nextStep ? { next_step: this.nextStep } : {}),
      ...(this.retryAfter !== undefined ? { retry_after: this.retryAfter } : {}),
    };
  }
}

export class AgentRevokedError extends MandateError {
  /** What a site answered before the service confirmed the revocation (`agent_revoked`), when a site call led here. */
  readonly siteAnswer: string | undefined;
  constructor(init: MandateErrorInit, siteAnswer?: string) {
    super('agent_revoked', init);
    this.name = 'AgentRevokedError';
    this.siteAnswer = siteAnswer;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), ...(this.siteAnswer ? { site_answer: this.siteAnswer } : {}) };
  }
}

/** Raised by `pass()` when the service will not issue a pass without a new approval. */
export class AccessRequiredError extends MandateError {
  readonly site: string;
  /** What the site answered before the renewal was refused (e.g. `grant_revoked`), when a site call led here. */
  readonly siteAnswer: string | undefined;
  constructor(site: string, init: MandateErrorInit, siteAnswer?: string) {
    super('access_required', init);
    this.name = 'AccessRequiredError';
    this.site = site;
    this.siteAnswer = siteAnswer;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), site: this.site, ...(this.siteAnswer ? { site_answer: this.siteAnswer } : {}) };
  }
}

export class ServiceUnreachableError extends MandateError {
  constructor(init: MandateErrorInit) {
    super('unreachable', init);
    this.name = 'ServiceUnreachableError';
  }
}

export type ApprovalOutcome = 'denied' | 'expired' | 'consumed' | 'undelivered' | 'timeout';

/** The owner did not approve (or the approval could not be collected). */
export class ApprovalError extends MandateError {
  readonly txnId: string;
  readonly outcome: ApprovalOutcome;
  /** The request still waits for the owner (a `timeout` of the caller's own): it can be waited for again. */
  readonly stillOpen: boolean;
  constructor(txnId: string, outcome: ApprovalOutcome, detail: string, stillOpen = false) {
    super(`approval_${outcome}`, { detail });
    this.name = 'ApprovalError';
    this.txnId = txnId;
    this.outcome = outcome;
    this.stillOpen = stillOpen;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), txn_id: this.txnId };
  }
}

/**
 * `listSecrets`, `fillSecret` or `saveSecret` while the agent status says `password_manager: "off"`
 * (decisions §17): the agent's browser runs on its operator's computers, where no secret goes until
 * the owner turns the password manager on for this agent. The password manager was not called.
 */
export class PasswordManagerOffError extends MandateError {
  /** The SDK function refused (`listSecrets`, `fillSecret`, `saveSecret`). */
  readonly refused: string;
  constructor(refused: string) {
    super('password_manager_off', {
      detail: `${refused} refused: this agent's browser runs on its operator's computers and its owner has not turned the password manager on for it`,
      nextStep: 'ask the owner to take over with requestTakeover (they sign in themselves), or to turn the password manager on for this agent in the Mandate app',
    });
    this.name = 'PasswordManagerOffError';
    this.refused = refused;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), refused: this.refused };
  }
}

export class InvalidInputError extends MandateError {
  constructor(detail: string) {
    super('invalid_input', { detail });
    this.name = 'InvalidInputError';
  }
}

export class KeyFileError extends MandateError {
  constructor(detail: string, nextStep?: string) {
    super('key_file', { detail, nextStep });
    this.name = 'KeyFileError';
  }
}

export class StateLockedError extends MandateError {
  constructor(detail: string) {
    super('state_locked', { detail, nextStep: 'retry; if no other mandate-agent process runs, remove the .lock file named above' });
    this.name = 'StateLockedError';
  }
}

/** Matches the service's 403 wording for a removed or blocked agent (decisions §4: match on `revoked`). */
export function isRevokedDetail(status: number, detail: string): boolean {
  return status === 403 && /\brevoked\b/i.test(detail) && /agent/i.test(detail);
}
