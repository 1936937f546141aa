/**
 * The owner's OIDC clients (decisions §18): register, list, change, delete, rotate the secret,
 * verify the site; and `authenticateClient` for the token endpoint. No HTTP, no SQL.
 */
import { clientSecretMatches, hashClientSecret, newClientSecret, newVerificationToken } from '../../crypto/client-secret.ts';
import type { OutboundFetch, OutboundPolicy } from '../../outbound/types.ts';
import type { OidcClientChanges, OidcClientRecord, Store } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import { looksLikeId, newId } from '../ids.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { MAX_CLIENTS_PER_OWNER, checkBackchannelLogoutUri, checkRedirectUris, clientName } from './client-rules.ts';
import { type SiteCheck, checkSiteFile } from './site-file.ts';
import { allOrigins, isClientVerified, siteOrigins, verificationLine, verificationUrl } from './site-origins.ts';

/** Verifications per owner per hour: each one may fetch up to ten sites on the owner's say. */
export const VERIFICATIONS_PER_HOUR = 30;

export interface NewClient {
  name: string;
  redirectUris: string[];
  backchannelLogoutUri?: string | undefined;
  isPublic?: boolean | undefined;
}

/** An owner's change; `backchannelLogoutUri: null` removes it. */
export interface ClientPatch {
  name?: string | undefined;
  redirectUris?: string[] | undefined;
  backchannelLogoutUri?: string | null | undefined;
}

export interface ClientVerification {
  /** The file to put the line in: that of the first site checked (or of the first redirect URI). */
  url: string;
  /** Every file a verification fetches, one per site; all must hold the line. */
  urls: string[];
  line: string;
}

export interface ClientView {
  client: OidcClientRecord;
  /** Every site of its redirect URIs held the line at the last check. */
  verified: boolean;
  verification: ClientVerification;
}

export interface OidcClientsDeps {
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
  /** The outbound guard (guardedFetch of outbound/guarded-fetch.ts) built with `policy`. */
  fetch: OutboundFetch;
  policy: OutboundPolicy;
}

export class OidcClients {
  constructor(private readonly deps: OidcClientsDeps) {}

  view(client: OidcClientRecord): ClientView {
    const urls = siteOrigins(client.redirectUris, this.deps.policy).map(verificationUrl);
    const first = urls[0] ?? verificationUrl(new URL(client.redirectUris[0] ?? '').origin);
    return {
      client,
      verified: isClientVerified(client, this.deps.policy),
      verification: { url: first, urls, line: verificationLine(client.id, client.verificationToken) },
    };
  }

  async list(userId: string): Promise<ClientView[]> {
    return (await this.deps.store.oidcClients.listForUser(userId)).map((c) => this.view(c));
  }

  /** The owner's client; unknown ids and other owners' clients are both 404. */
  async owned(userId: string, clientId: string): Promise<OidcClientRecord> {
    const client = looksLikeId('c', clientId) ? await this.deps.store.oidcClients.byId(clientId) : undefined;
    if (!client || client.userId !== userId) throw notFound('client not found');
    return client;
  }

  /** Registers a client; the secret (confidential clients only) is answered here and never again. */
  async create(userId: string, input: NewClient): Promise<{ view: ClientView; secret: string | null }> {
    const name = clientName(input.name);
    checkRedirectUris(input.redirectUris);
    if (input.backchannelLogoutUri !== undefined) checkBackchannelLogoutUri(input.backchannelLogoutUri, this.deps.policy);
    // Counted, then inserted: two racing registrations may pass 50 by one. A cap against abuse,
    // not a rule anything depends on, so that is acceptable.
    if ((await this.deps.store.oidcClients.countForUser(userId)) >= MAX_CLIENTS_PER_OWNER) {
      throw conflict(`you have ${MAX_CLIENTS_PER_OWNER} OIDC clients, the most an account may have: delete one you no longer use (DELETE /api/oidc/clients/{client_id})`);
    }
    const now = this.deps.clock.now();
    const secret = input.isPublic === true ? null : newClientSecret();
    const client: OidcClientRecord = {
      id: newId('c'),
      userId,
      name,
      redirectUris: [...input.redirectUris],
      backchannelLogoutUri: input.backchannelLogoutUri ?? null,
      isPublic: secret === null,
      secretHash: secret === null ? null : hashClientSecret(secret),
      secretSetAt: secret === null ? null : now,
      verificationToken: newVerificationToken(),
      verifiedOrigins: [],
      verifiedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.store.oidcClients.create(client);
    return { view: this.view(client), secret };
  }

  /**
   * Changes name, redirect URIs or logout URI. Sites no longer among the redirect URIs lose their
   * verification (adding a site back needs a fresh check); the remaining ones keep it.
   */
  async update(userId: string, clientId: string, patch: ClientPatch): Promise<ClientView> {
    if (patch.name === undefined && patch.redirectUris === undefined && patch.backchannelLogoutUri === undefined) {
      throw badRequest('nothing to change: send name, redirect_uris or backchannel_logout_uri');
    }
    const current = await this.owned(userId, clientId);
    const changes: OidcClientChanges = { updatedAt: this.deps.clock.now() };
    if (patch.name !== undefined) changes.name = clientName(patch.name);
    if (patch.redirectUris !== undefined) {
      checkRedirectUris(patch.redirectUris);
      const origins = allOrigins(patch.redirectUris);
      changes.redirectUris = [...patch.redirectUris];
      changes.verifiedOrigins = current.verifiedOrigins.filter((o) => origins.includes(o));
      if (changes.verifiedOrigins.length === 0) changes.verifiedAt = null;
    }
    if (patch.backchannelLogoutUri !== undefined) {
      if (patch.backchannelLogoutUri !== null) checkBackchannelLogoutUri(patch.backchannelLogoutUri, this.deps.policy);
      changes.backchannelLogoutUri = patch.backchannelLogoutUri;
    }
    return this.view(await this.write(userId, current, changes, 'the client was changed at the same time (another edit or a verification); reload it and try again'));
  }

  async remove(userId: string, clientId: string): Promise<void> {
    const client = await this.owned(userId, clientId);
    if (!(await this.deps.store.oidcClients.delete(userId, client.id))) throw notFound('client not found');
  }

  /** A new secret, answered once; the old one stops working at once. 409 for a public client. */
  async rotateSecret(userId: string, clientId: string): Promise<string> {
    const client = await this.owned(userId, clientId);
    if (client.isPublic) throw conflict('a public client has no secret to rotate (it proves itself with PKCE); register a confidential client if your site keeps a secret on its server');
    const secret = newClientSecret();
    if (!(await this.deps.store.oidcClients.replaceSecret(userId, client.id, hashClientSecret(secret), this.deps.clock.now()))) throw notFound('client not found');
    return secret;
  }

  /**
   * Fetches each site's verification file and looks for the client's line. All must hold it: then
   * the client is verified (200). Otherwise 400 naming each file, what was wrong there and the line
   * to put in it; a failed check changes nothing (a site that is briefly down stays verified).
   */
  async verify(userId: string, clientId: string): Promise<{ view: ClientView; checks: SiteCheck[] }> {
    const client = await this.owned(userId, clientId);
    const origins = siteOrigins(client.redirectUris, this.deps.policy);
    const line = verificationLine(client.id, client.verificationToken);
    if (origins.length === 0) {
      throw badRequest('this client has only development redirect URIs (http://localhost, http://127.0.0.1, http://[::1]): there is no public site to verify, and sign-ins to them show "unverified site". Add an https: redirect URI to verify.');
    }
    await this.deps.limiter.check(`oidc-verify:${userId}`, VERIFICATIONS_PER_HOUR, 3600);
    const checks = await Promise.all(origins.map((o) => checkSiteFile(this.deps.fetch, verificationUrl(o), line, client.id)));
    const failed = checks.filter((c) => !c.ok);
    if (failed.length > 0) {
      const problems = failed.map((c) => ('problem' in c ? c.problem : '')).join('; ');
      const where = failed.map((c) => c.url).join(', ');
      throw badRequest(`site not verified: ${problems}. Put this line, on a line of its own, in ${where}: ${line}`, { checks: checks.map(checkOut), line });
    }
    const now = this.deps.clock.now();
    const verified = await this.write(userId, client, { verifiedOrigins: origins, verifiedAt: now }, 'the redirect URIs changed during the check; verify again');
    return { view: this.view(verified), checks };
  }

  /**
   * For the token endpoint: the confidential client whose secret this is, or undefined. The same
   * answer, after the same hashing and constant-time comparison, for an unknown client, a public
   * one and a wrong secret.
   */
  async authenticateClient(clientId: string, secret: string): Promise<OidcClientRecord | undefined> {
    const client = looksLikeId('c', clientId) ? await this.deps.store.oidcClients.byId(clientId) : undefined;
    const matches = clientSecretMatches(secret, client?.secretHash ?? null);
    return matches ? client : undefined;
  }

  /** The compare-and-set write; 404 when the client went away meanwhile, 409 when it changed. */
  private async write(userId: string, current: OidcClientRecord, changes: OidcClientChanges, changedMeanwhile: string): Promise<OidcClientRecord> {
    const updated = await this.deps.store.oidcClients.update(userId, current.id, changes, current.redirectUris);
    if (updated) return updated;
    if (!(await this.deps.store.oidcClients.byId(current.id))) throw notFound('client not found');
    throw conflict(changedMeanwhile);
  }
}

/** A check as the API shows it. */
export const checkOut = (c: SiteCheck) => (c.ok ? { url: c.url, ok: true } : { url: c.url, ok: false, problem: c.problem, found: c.found });
