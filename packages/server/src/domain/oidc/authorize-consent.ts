/**
 * The consent page of a person's browser at /oidc/authorize (decisions §28). The page shows the
 * checked request (view); its script then asks, with the person's session, for a pending
 * authorization (start): a sealed blob bound to that owner, 10 minutes, with a random id, and the
 * passkey options that approve it. Approve needs the passkey assertion (its challenge consumed in
 * the store, bound to this authorization) and consumes the authorization's id in the store: of two
 * racing answers (approve or deny) exactly one goes through. No HTTP, no SQL.
 */
import { randomBytes } from 'node:crypto';
import { seconds } from '../../clock.ts';
import type { Passkeys } from '../passkeys/passkeys.ts';
import { AppError, badRequest } from '../errors.ts';
import { type AuthorizeParams, errorRedirect, redirectTo } from './authorize.ts';
import { type BrowserAuthorization, browserAuthorize } from './authorize-browser.ts';
import { appName, approveApp } from './app-agents.ts';
import { mintCode, newCodeId } from './codes.ts';
import { CODE_LIFETIME_MS, type OidcDeps } from './deps.ts';
import type { KnownClient } from './known-client.ts';
import { OAuthError } from './oauth-error.ts';
import { resolveClient } from './resolve-client.ts';
import { askedWithGrant, requestableScopes } from './scopes.ts';

/** How long the person has between opening the page and answering. */
export const APP_CONSENT_LIFETIME_MS = 10 * 60_000;
/** Starts per person per minute: each stores a passkey challenge. */
export const APP_CONSENT_STARTS_PER_MINUTE = 20;

const SEAL_LABEL = 'oidc-app-consent/v1';
const SINGLE_USE = 'oidc-app-consent';
const GONE = 'this approval page is unknown, expired, answered already or not yours: go back to the app that sent you here and start again';
const NEEDS_PASSKEY = 'approving an app needs a passkey (a password sign-in alone is not enough): open Mandate at /app, add a passkey under Devices, then reload this page';
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

export interface AppConsentDeps extends OidcDeps {
  passkeys: Pick<Passkeys, 'assertionOptions' | 'verifyAssertion'>;
}

/** What the consent page shows: everything as text (the logo and client_uri are never fetched). */
export interface AppConsentView {
  clientName: string;
  /** Where the app comes from: its client_id URL's host, the site of an owner's client, or "self-registered". */
  clientMark: string;
  clientId: string;
  /** The resource URL; null for a plain sign-in. */
  resource: string | null;
  /** The grant's site: the resource's host, or the redirect URI's host for a plain sign-in. */
  site: string;
  scopes: string[];
  redirectHost: string;
  warnings: string[];
  clientUri: string | null;
  logoUri: string | null;
}

interface Sealed { u: string; id: string; exp: number; r: BrowserAuthorization }

const isSealed = (v: unknown): v is Sealed => {
  const s = v as Partial<Sealed> | null;
  return typeof s === 'object' && s !== null && typeof s.u === 'string' && typeof s.id === 'string' && typeof s.exp === 'number' && typeof s.r === 'object' && s.r !== null;
};

const hostOf = (url: string): string => new URL(url).host;
const isLoopback = (url: string): boolean => LOOPBACK.has(new URL(url).hostname) || /^127\.\d+\.\d+\.\d+$/.test(new URL(url).hostname);

/** Where the client comes from, as the page and the app's agent name say it. */
function clientMark(client: KnownClient, redirectUri: string): string {
  if (client.kind === 'metadata_document') return hostOf(client.id);
  if (client.kind === 'owner') return hostOf(redirectUri);
  return 'self-registered';
}

/** The site a grant of this request is filed under. */
const siteOf = (r: BrowserAuthorization): string => hostOf(r.resource ?? r.redirectUri);

export class AppConsent {
  constructor(private readonly d: AppConsentDeps) {}

  /** /oidc/authorize from a browser: the consent page's text, or an error redirect. Throws 400 while the redirect URI is not known good. */
  async authorize(params: AuthorizeParams, repeated: string[], ip: string | null): Promise<{ kind: 'consent'; view: AppConsentView } | { kind: 'redirect'; location: string }> {
    const answer = await browserAuthorize(this.d, params, repeated, ip);
    return answer.kind === 'redirect' ? answer : { kind: 'consent', view: this.view(answer.client, answer.request) };
  }

  /** The page's text, from a request browserAuthorize accepted. */
  view(client: KnownClient, r: BrowserAuthorization): AppConsentView {
    const redirectHost = hostOf(r.redirectUri);
    const warnings: string[] = [];
    if (isLoopback(r.redirectUri)) warnings.push(`The approval goes to a program on this computer (${redirectHost}). Approve only if you started it yourself just now.`);
    else if (client.kind === 'metadata_document' && hostOf(client.id) !== redirectHost) warnings.push(`The app says it is ${hostOf(client.id)}, but your approval is sent to ${redirectHost}.`);
    if (client.kind === 'registered') warnings.push('This app registered itself with Mandate: its name is not checked by anyone.');
    return {
      clientName: client.name, clientMark: clientMark(client, r.redirectUri), clientId: client.id, resource: r.resource, site: siteOf(r),
      scopes: r.scopes, redirectHost, warnings, clientUri: client.clientUri, logoUri: client.logoUri,
    };
  }

  /** The signed-in owner opens the page: a pending authorization bound to them, and the passkey options that approve it. */
  async start(userId: string, params: AuthorizeParams, repeated: string[], ip: string | null): Promise<{ consentId: string; options: unknown; view: AppConsentView }> {
    const answer = await this.check(params, repeated, ip);
    await this.d.limiter.check(`oidc-app-consent:${userId}`, APP_CONSENT_STARTS_PER_MINUTE, 60);
    const sealed: Sealed = { u: userId, id: randomBytes(16).toString('base64url'), exp: this.d.clock.now() + APP_CONSENT_LIFETIME_MS, r: answer.request };
    const consentId = this.d.secret.seal(SEAL_LABEL, sealed);
    try {
      const { options } = await this.d.passkeys.assertionOptions(userId, this.subject(sealed.id));
      return { consentId, options, view: this.view(answer.client, answer.request) };
    } catch (e) {
      // assertionOptions answers 409 exactly when the person has no passkey: here that is a refusal.
      if (e instanceof AppError && e.status === 409) throw new AppError(403, NEEDS_PASSKEY, { next_step: 'add a passkey in the app (/app), then reload this page' });
      throw e;
    }
  }

  /** Approved with the passkey: the app and its grant, then the client's redirect URI with `code`, `state` and `iss`. */
  async approve(userId: string, consentId: string, assertion: unknown, ip: string | null): Promise<string> {
    const sealed = this.reopen(userId, consentId);
    await this.d.passkeys.verifyAssertion(userId, this.subject(sealed.id), assertion);
    const r = sealed.r;
    // The client again: its redirect URIs or document may have changed since the page opened.
    const client = await this.client(r, ip);
    await this.consume(sealed);
    const now = this.d.clock.now();
    const site = siteOf(r);
    const owner = await this.d.store.users.byId(userId);
    // A plain sign-in releases email/phone only as the agents' sign-ins do (scopes.ts); a resource's scopes are its own.
    const scopes = r.resource === null ? requestableScopes(r.scopes.join(' '), owner) : r.scopes;
    const userInfo = r.resource === null ? askedWithGrant(scopes, undefined).userInfo : [];
    const { app, grant, created } = await approveApp(this.d.store, {
      userId, clientId: client.id, name: appName(client.name, clientMark(client, r.redirectUri)), resource: r.resource, site, scopes, userInfo, now,
    });
    if (created) {
      await this.d.activity.record({ userId, action: 'agent.created', agentId: app.id, detail: { name: app.name, kind: 'app', client_id: client.id }, ip });
      await this.d.notifier.agentAdded(userId, app.name, 'when you approved it in your browser');
    }
    await this.d.activity.record({ userId, action: 'app.approved', agentId: app.id, site, detail: { client_id: client.id, client_name: client.name, resource: r.resource, scopes, grant_id: grant.id }, ip });
    const code = mintCode(this.d.secret, {
      jti: newCodeId(), clientId: client.id, redirectUri: r.redirectUri, codeChallenge: r.codeChallenge, nonce: r.nonce,
      agentId: app.id, userId, grantId: grant.id, site, scopes, authTime: seconds(now), amr: ['app', 'passkey'],
      expiresAt: now + CODE_LIFETIME_MS, dpopJkt: r.dpopJkt, resource: r.resource,
    });
    return redirectTo(this.d.issuer, r.redirectUri, { code, state: r.state });
  }

  /** Declined: `error=access_denied` with `state` and `iss`. */
  async deny(userId: string, consentId: string, ip: string | null): Promise<string> {
    const sealed = this.reopen(userId, consentId);
    await this.consume(sealed);
    const r = sealed.r;
    await this.d.activity.record({ userId, action: 'app.denied', site: siteOf(r), detail: { client_id: r.clientId, resource: r.resource, scopes: r.scopes }, ip });
    return errorRedirect(this.d.issuer, r.redirectUri, r.state, 'access_denied', 'the person declined');
  }

  /** A request the page may show; anything else (a link that was tampered with after the page checked it) is 400. */
  private async check(params: AuthorizeParams, repeated: string[], ip: string | null) {
    const answer = await browserAuthorize(this.d, params, repeated, ip);
    if (answer.kind === 'redirect') throw badRequest(`this authorization request is not valid: ${new URL(answer.location).searchParams.get('error_description') ?? 'reload the page the app opened'}`);
    return answer;
  }

  private async client(r: BrowserAuthorization, ip: string | null): Promise<KnownClient> {
    let client: KnownClient;
    try {
      client = await resolveClient(this.d, r.clientId, ip);
    } catch (e) {
      if (e instanceof OAuthError) throw badRequest(`the app can no longer be used: ${e.detail}`);
      throw e;
    }
    if (!client.redirectUris.includes(r.redirectUri)) throw badRequest('the app no longer lists this redirect URI: go back to the app and start again');
    return client;
  }

  private reopen(userId: string, consentId: string): Sealed {
    const sealed = this.d.secret.open(SEAL_LABEL, consentId);
    if (!isSealed(sealed) || sealed.u !== userId || sealed.exp <= this.d.clock.now()) throw badRequest(GONE);
    return sealed;
  }

  /** The authorization is answered once: of N concurrent answers on any nodes exactly one passes. */
  private async consume(sealed: Sealed): Promise<void> {
    const now = this.d.clock.now();
    if (!(await this.d.store.singleUse.consume(SINGLE_USE, sealed.id, sealed.exp + 60_000, now))) throw badRequest(GONE);
  }

  /** The passkey challenge's subject: bound to this one pending authorization. */
  private subject(id: string): string {
    return `app-consent:${this.d.secret.derive(SEAL_LABEL, id)}`;
  }
}
