import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './app.ts';
import { remoteAddress } from './app.ts';

/**
 * Walks an identity-provider flow the way a browser would, for the in-process tests: the service's
 * answers come from `app.inject`, the stand-in issuer's over real HTTP with its cookies kept.
 */

/** The cookies a response sets, name to value. */
export function setCookies(res: LightMyRequestResponse): Record<string, string> {
  const out: Record<string, string> = {};
  const raw = res.headers['set-cookie'];
  for (const line of Array.isArray(raw) ? raw : raw ? [raw] : []) {
    const [pair] = line.split(';');
    const eq = pair?.indexOf('=') ?? -1;
    if (pair && eq > 0) out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

/** Follows the issuer's redirects (login, interaction, resume) until it sends the browser back to `back`; answers that URL. */
export async function walkIssuer(start: string, back: string): Promise<URL> {
  const jar = new Map<string, string>();
  let url = new URL(start);
  for (let hops = 0; hops < 10; hops++) {
    const res = await fetch(url, { redirect: 'manual', headers: jar.size ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {} });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair?.indexOf('=') ?? -1;
      if (pair && eq > 0) jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const location = res.headers.get('location');
    if (!location) assert.fail(`the issuer answered ${res.status} at ${url.pathname} without a redirect: ${await res.text()}`);
    url = new URL(location, url);
    if (url.href.startsWith(back)) return url;
  }
  return assert.fail('the issuer kept redirecting');
}

export interface Flow {
  /** The callback URL the issuer sent the browser back to. */
  callback: URL;
  /** The browser-binding cookie the start set (`oauth_flow`), if any. */
  cookie: string | null;
}

/** GET /start (signed in with `auth`: a link; without: a sign-in), then the issuer until it sends the browser back. */
export async function startFlow(t: Pick<TestApp, 'app' | 'config'>, provider: string, auth: Record<string, string> = {}): Promise<Flow> {
  const res = await t.app.inject({ url: `/api/oauth/${provider}/start`, headers: auth, remoteAddress: remoteAddress() });
  assert.equal(res.statusCode, 302, res.body);
  const location = String(res.headers.location);
  assert.ok(!location.startsWith('/app'), `the start was refused: ${decodeURIComponent(location)}`);
  return { callback: await walkIssuer(location, t.config.baseUrl), cookie: setCookies(res)['oauth_flow'] ?? null };
}

/** GET /callback as the browser would send it: with the flow cookie (unless `withCookie` is false) and `auth`. */
export function deliver(t: Pick<TestApp, 'app'>, callback: URL, flow: { cookie: string | null }, auth: Record<string, string> = {}, opts: { withCookie?: boolean; path?: string } = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...auth };
  if (opts.withCookie !== false && flow.cookie) headers.cookie = `oauth_flow=${flow.cookie}`;
  return t.app.inject({ url: `${opts.path ?? callback.pathname}${callback.search}`, headers, remoteAddress: remoteAddress() });
}

/** Where a callback sent the browser, parsed: the app view and the `oauth` outcome parameters. */
export function landing(res: LightMyRequestResponse): { view: string; oauth: string | null; reason: string | null; detail: string | null; provider: string | null } {
  assert.equal(res.statusCode, 302, res.body);
  const location = String(res.headers.location);
  assert.ok(location.startsWith('/app#'), location);
  const [view = '', query = ''] = location.slice('/app#'.length).split('?');
  const q = new URLSearchParams(query);
  return { view, oauth: q.get('oauth'), reason: q.get('reason'), detail: q.get('detail'), provider: q.get('provider') };
}
