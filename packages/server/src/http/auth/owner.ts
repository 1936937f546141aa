import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Accounts, CurrentSession, SignedIn } from '../../domain/accounts/accounts.ts';
import { forbidden, unauthorized } from '../../domain/errors.ts';

/**
 * The session cookie's name (decisions §25). On https it carries the `__Host-` prefix: browsers
 * then only accept it with Secure, Path=/ and no Domain, so no sibling subdomain and no plain-http
 * page can plant or overwrite one. Plain http (development on localhost) cannot have the prefix.
 */
export const sessionCookieName = (baseUrl: string): string => (new URL(baseUrl).protocol === 'https:' ? '__Host-session' : 'session');
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface OwnerContext extends CurrentSession {
  via: 'cookie' | 'bearer';
}

/**
 * Resolves the signed-in owner of a request: `Authorization: Bearer <session_token>` for native
 * clients, the session cookie for browsers (`__Host-session` on https, `session` on http; only the
 * name of the service's own scheme is read). A cookie-authenticated request that changes state
 * from another origin is refused (decisions §2), so a third-party page cannot ride the cookie.
 */
export class OwnerAuth {
  private readonly origin: string;
  private readonly cookieName: string;
  /** Attributes of the session cookie (never a Domain); clearing it must name the same ones. */
  private readonly cookie: { httpOnly: true; sameSite: 'lax'; secure: boolean; path: '/' };

  constructor(private readonly accounts: Accounts, baseUrl: string) {
    const url = new URL(baseUrl);
    this.origin = url.origin;
    this.cookieName = sessionCookieName(baseUrl);
    this.cookie = { httpOnly: true, sameSite: 'lax', secure: url.protocol === 'https:', path: '/' };
  }

  async optional(request: FastifyRequest): Promise<OwnerContext | undefined> {
    const header = request.headers.authorization;
    if (typeof header === 'string' && /^bearer /i.test(header)) {
      const session = await this.accounts.session(header.slice(7).trim());
      if (!session) throw unauthorized('session expired or invalid; sign in again');
      return { ...session, via: 'bearer' };
    }
    const cookie = request.cookies[this.cookieName];
    if (!cookie) return undefined;
    const session = await this.accounts.session(cookie);
    if (!session) return undefined;
    if (!SAFE_METHODS.has(request.method)) this.refuseCrossSite(request);
    return { ...session, via: 'cookie' };
  }

  async required(request: FastifyRequest): Promise<OwnerContext> {
    const owner = await this.optional(request);
    if (!owner) throw unauthorized('not signed in');
    return owner;
  }

  /**
   * A WebSocket upgrade is a GET, yet opens a channel that acts (the take-over relay): with the
   * cookie, the Origin rule of decisions §2 applies to it as to any state-changing request.
   */
  async requiredForUpgrade(request: FastifyRequest): Promise<OwnerContext> {
    const owner = await this.required(request);
    if (owner.via === 'cookie') this.refuseCrossSite(request);
    return owner;
  }

  async admin(request: FastifyRequest): Promise<OwnerContext> {
    const owner = await this.required(request);
    if (this.accounts.role(owner.user) !== 'admin') throw forbidden('admin only');
    return owner;
  }

  /** Sets the session cookie and answers what native clients need (`session_token`). */
  signIn(reply: FastifyReply, signedIn: SignedIn): void {
    reply.setCookie(this.cookieName, signedIn.sessionToken, { ...this.cookie, expires: new Date(signedIn.expiresAt) });
  }

  signOut(reply: FastifyReply): void {
    reply.clearCookie(this.cookieName, this.cookie);
  }

  private refuseCrossSite(request: FastifyRequest): void {
    const origin = request.headers.origin;
    if (typeof origin === 'string') {
      if (origin !== this.origin) throw forbidden('cross-site request refused: Origin does not match this service');
      return;
    }
    if (request.headers['sec-fetch-site'] === 'cross-site') throw forbidden('cross-site request refused');
  }
}
