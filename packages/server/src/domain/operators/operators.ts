/**
 * Operators (decisions §17): a signed-in person registers one, proves its domain, and an admin
 * switches it on or off. The secret is shown once and stored as a SHA-256; the authenticator for the
 * operator API compares in constant time. No HTTP, no SQL.
 */
import { clientSecretMatches, hashClientSecret, newClientSecret, newVerificationToken } from '../../crypto/client-secret.ts';
import type { OutboundFetch, OutboundPolicy } from '../../outbound/types.ts';
import type { OperatorRecord, Store } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import type { Activity } from '../activity/activity.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import { looksLikeId, newId } from '../ids.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { MAX_OPERATORS_PER_PERSON, operatorBrowser, operatorName, operatorOrigin } from './registration.ts';
import { type SwitchOutcome, switchOperator } from './operator-switch.ts';
import { checkOperatorFile, operatorVerificationLine, operatorVerificationUrl } from './verification.ts';

/** Abuse limits (decisions §25): registrations and verifications per person per hour (429 beyond). */
export const OPERATOR_LIMITS = { registrationsPerHour: 5, verificationsPerHour: 30 } as const;
/** The admin list shows at most this many operators, newest first. */
export const ADMIN_LIST_CAP = 500;

export interface OperatorView {
  operator: OperatorRecord;
  verification: { url: string; line: string };
}

export interface NewOperator {
  name: string;
  redirectUris: string[];
  browser: string;
}

export interface OperatorsDeps {
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
  activity: Activity;
  /** The outbound guard (guardedFetch of outbound/guarded-fetch.ts) built with `policy`. */
  fetch: OutboundFetch;
  policy: OutboundPolicy;
}

const NOT_FOUND = 'operator not found';

/** The origin of the operator's redirect URIs: where its verification file lives. */
const originOf = (o: OperatorRecord): string => new URL(o.redirectUris[0] ?? `https://${o.domain}`).origin;

export class Operators {
  constructor(private readonly d: OperatorsDeps) {}

  view(operator: OperatorRecord): OperatorView {
    return { operator, verification: { url: operatorVerificationUrl(originOf(operator)), line: operatorVerificationLine(operator.id, operator.verificationToken) } };
  }

  async list(userId: string): Promise<OperatorView[]> {
    return (await this.d.store.operators.listForUser(userId)).map((o) => this.view(o));
  }

  /** The person's operator; unknown ids and other people's operators are both 404. */
  async owned(userId: string, operatorId: string): Promise<OperatorRecord> {
    const operator = looksLikeId('op', operatorId) ? await this.d.store.operators.byId(operatorId) : undefined;
    if (!operator || operator.userId !== userId) throw notFound(NOT_FOUND);
    return operator;
  }

  /** Registers an operator, `pending`; the secret is answered here and never again. */
  async register(userId: string, input: NewOperator, ip: string | null = null): Promise<{ view: OperatorView; secret: string }> {
    const name = operatorName(input.name);
    const origin = operatorOrigin(input.redirectUris, this.d.policy);
    const browser = operatorBrowser(input.browser);
    await this.d.limiter.check(`operators:register:${userId}`, OPERATOR_LIMITS.registrationsPerHour, 3600);
    // Counted, then inserted: racing registrations may pass the cap by one; it is against noise, nothing depends on it.
    if ((await this.d.store.operators.countForUser(userId)) >= MAX_OPERATORS_PER_PERSON) {
      throw conflict(`you have ${MAX_OPERATORS_PER_PERSON} operators, the most one person may register`);
    }
    const now = this.d.clock.now();
    const secret = newClientSecret();
    const operator: OperatorRecord = {
      id: newId('op'),
      userId,
      name,
      domain: origin.host,
      redirectUris: [...input.redirectUris],
      browser,
      secretHash: hashClientSecret(secret),
      secretSetAt: now,
      status: 'pending',
      verificationToken: newVerificationToken(),
      verifiedAt: null,
      statusChangedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.d.store.operators.create(operator);
    await this.d.activity.record({ userId, action: 'operator.registered', detail: { operator_id: operator.id, name, domain: operator.domain }, ip });
    return { view: this.view(operator), secret };
  }

  /** A new secret, answered once (with when it was made); the old one stops working at once. */
  async rotateSecret(userId: string, operatorId: string, ip: string | null = null): Promise<{ secret: string; setAt: number }> {
    const operator = await this.owned(userId, operatorId);
    const secret = newClientSecret();
    const setAt = this.d.clock.now();
    if (!(await this.d.store.operators.replaceSecret(userId, operator.id, hashClientSecret(secret), setAt))) throw notFound(NOT_FOUND);
    await this.d.activity.record({ userId, action: 'operator.secret_rotated', detail: { operator_id: operator.id }, ip });
    return { secret, setAt };
  }

  /**
   * Fetches the operator's verification file through the outbound guard; verified when a line equals
   * the operator's line. Otherwise 400 naming what was found (status, size, lines) and the line to
   * publish; a failed check changes nothing (a verified domain that is briefly down stays verified).
   */
  async verify(userId: string, operatorId: string, ip: string | null = null): Promise<OperatorRecord> {
    const operator = await this.owned(userId, operatorId);
    await this.d.limiter.check(`operators:verify:${userId}`, OPERATOR_LIMITS.verificationsPerHour, 3600);
    const { url, line } = this.view(operator).verification;
    const check = await checkOperatorFile(this.d.fetch, originOf(operator), operator.id, operator.verificationToken);
    if (!check.ok) throw badRequest(`domain not verified: ${check.problem}. Put this line, on a line of its own, in ${url}: ${line}`, { url, line, found: check.found });
    const verified = await this.d.store.operators.markVerified(operator.id, this.d.clock.now());
    if (!verified) throw notFound(NOT_FOUND);
    await this.d.activity.record({ userId, action: 'operator.verified', detail: { operator_id: operator.id, domain: operator.domain }, ip });
    return verified;
  }

  /** Every operator, newest first, capped (admin only: the caller checked the role). */
  async adminList(): Promise<OperatorView[]> {
    return (await this.d.store.operators.listAll(ADMIN_LIST_CAP)).map((o) => this.view(o));
  }

  /**
   * The admin switch (operator-switch.ts). Recorded in the operator owner's trail, with how many
   * agents it blocked or unblocked, also when the operator already was as asked.
   */
  async setEnabled(operatorId: string, enabled: boolean, ip: string | null = null): Promise<SwitchOutcome> {
    if (!looksLikeId('op', operatorId)) throw notFound(NOT_FOUND);
    const outcome = await switchOperator(this.d.store, this.d.clock, operatorId, enabled);
    const { operator } = outcome;
    await this.d.activity.record({ userId: operator.userId, action: 'operator.switched', detail: { operator_id: operator.id, enabled, status: operator.status, changed: outcome.changed, agents: outcome.agentIds.length }, ip });
    return outcome;
  }

  /**
   * HTTP Basic for the operator API: the operator whose id and secret these are, or undefined. The
   * same hashing and constant-time comparison for an unknown id and for a wrong secret.
   */
  async authenticate(operatorId: string, secret: string): Promise<OperatorRecord | undefined> {
    const operator = looksLikeId('op', operatorId) ? await this.d.store.operators.byId(operatorId) : undefined;
    return clientSecretMatches(secret, operator?.secretHash ?? null) ? operator : undefined;
  }
}
