/**
 * Consent to an operator (decisions §17): the signed-in owner confirms with a passkey assertion (a
 * password session alone is never enough), and the operator's registered redirect URI receives a
 * single-use code (60 s), `state` and `iss`; or `error=access_denied`. The consent id is a sealed
 * blob (the OIDC secret, its own label) naming the person, the operator, the URI, `state` and the
 * PKCE challenge, so nothing is stored until the person decides. No HTTP, no SQL.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { OidcSecret } from '../../crypto/oidc-secret.ts';
import type { ConnectionRecord, OperatorRecord, Store } from '../../store/ports/index.ts';
import { type CodeExchangeIn, exchangeCode } from './code-exchange.ts';
import { CODE_LIFETIME_MS, hashCode } from './codes.ts';
import type { ConnectionLifecycle } from './connection-lifecycle.ts';
import type { Activity } from '../activity/activity.ts';
import { AppError, badRequest } from '../errors.ts';
import type { Passkeys } from '../passkeys/passkeys.ts';
import { type ConsentQuery, type ConsentRequest, checkConsentRequest, consentOperator } from './consent-request.ts';

/** How long the person has between opening the page and deciding. */
export const CONSENT_LIFETIME_MS = 10 * 60_000;

const SEAL_LABEL = 'operator-consent';
const CONSENT_GONE = 'this consent is unknown, expired or not yours: go back to the operator and start connecting again';
const NEEDS_PASSKEY = 'connecting an operator needs a passkey (a password sign-in alone is not enough): open the app at /app, add a passkey under Devices, then reload this page';

/** What the sealed consent id holds. */
interface Sealed { u: string; op: string; ru: string; st: string | null; cc: string; exp: number }

const isSealed = (v: unknown): v is Sealed => {
  const s = v as Partial<Sealed> | null;
  return typeof s === 'object' && s !== null && typeof s.u === 'string' && typeof s.op === 'string' && typeof s.ru === 'string'
    && (s.st === null || typeof s.st === 'string') && typeof s.cc === 'string' && typeof s.exp === 'number';
};

export interface ConsentDeps {
  store: Store;
  clock: Clock;
  passkeys: Pick<Passkeys, 'assertionOptions' | 'verifyAssertion'>;
  activity: Activity;
  secret: OidcSecret;
  /** The service's BASE_URL: `iss` of every redirect, as OIDC does. */
  issuer: string;
  /** Ends a connection whose code was reused (code-exchange.ts). */
  lifecycle: Pick<ConnectionLifecycle, 'end'>;
}

export class Consent {
  constructor(private readonly d: ConsentDeps) {}

  /** Checks a `/connect` request (for the page): 4xx AppError when anything is wrong. */
  check(q: ConsentQuery): Promise<ConsentRequest> {
    return checkConsentRequest(q, (id) => this.d.store.operators.byId(id));
  }

  /** Validates, then answers a consent id and the passkey options that confirm it. */
  async start(userId: string, q: ConsentQuery): Promise<{ consentId: string; options: unknown }> {
    const request = await this.check(q);
    const sealed: Sealed = { u: userId, op: request.operator.id, ru: request.redirectUri, st: request.state, cc: request.codeChallenge, exp: this.d.clock.now() + CONSENT_LIFETIME_MS };
    const consentId = this.d.secret.seal(SEAL_LABEL, sealed);
    try {
      const { options } = await this.d.passkeys.assertionOptions(userId, this.subject(consentId));
      return { consentId, options };
    } catch (e) {
      // assertionOptions answers 409 exactly when the person has no passkey: here that is a refusal.
      if (e instanceof AppError && e.status === 409) throw new AppError(403, NEEDS_PASSKEY, { next_step: 'add a passkey in the app (/app), then connect again' });
      throw e;
    }
  }

  /** The passkey confirmed: a code for the registered URI. The assertion's challenge is single-use. */
  async finish(userId: string, consentId: string, assertion: unknown, ip: string | null): Promise<string> {
    const { sealed, request } = await this.reopen(userId, consentId);
    await this.d.passkeys.verifyAssertion(userId, this.subject(consentId), assertion);
    const code = randomBytes(32).toString('base64url');
    await this.d.store.connections.saveCode({
      codeHash: hashCode(code), operatorId: sealed.op, userId, redirectUri: sealed.ru, codeChallenge: sealed.cc,
      expiresAt: this.d.clock.now() + CODE_LIFETIME_MS, usedAt: null, connectionId: null,
    });
    await this.d.activity.record({ userId, action: 'operator.consented', detail: { operator_id: request.operator.id, name: request.operator.name, domain: request.operator.domain }, ip });
    return this.redirect(sealed, { code });
  }

  /** The person declined: `error=access_denied` to the registered URI. */
  async deny(userId: string, consentId: string, ip: string | null): Promise<string> {
    const { sealed, request } = await this.reopen(userId, consentId);
    await this.d.activity.record({ userId, action: 'operator.consent_denied', detail: { operator_id: request.operator.id, name: request.operator.name, domain: request.operator.domain }, ip });
    return this.redirect(sealed, { error: 'access_denied' });
  }

  /** The consent as sealed, if it is this person's and unexpired; the operator checked again (it may have been switched off since). */
  private async reopen(userId: string, consentId: string): Promise<{ sealed: Sealed; request: ConsentRequest }> {
    const sealed = this.d.secret.open(SEAL_LABEL, consentId);
    if (!isSealed(sealed) || sealed.u !== userId || sealed.exp <= this.d.clock.now()) throw badRequest(CONSENT_GONE);
    const operator = consentOperator(await this.d.store.operators.byId(sealed.op), sealed.ru);
    return { sealed, request: { operator, redirectUri: sealed.ru, state: sealed.st, codeChallenge: sealed.cc } };
  }

  /** The operator's code exchange (code-exchange.ts), with this service's store and secret. */
  exchange(operator: OperatorRecord, input: CodeExchangeIn, ip: string | null): Promise<ConnectionRecord> {
    return exchangeCode(this.d, operator, input, ip);
  }

  /** The passkey challenge's subject: bound to this one consent. */
  private subject(consentId: string): string {
    return `consent:${this.d.secret.derive(SEAL_LABEL, consentId)}`;
  }

  private redirect(sealed: Sealed, params: Record<string, string>): string {
    const url = new URL(sealed.ru);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    if (sealed.st !== null) url.searchParams.set('state', sealed.st);
    url.searchParams.set('iss', this.d.issuer);
    return url.toString();
  }
}
