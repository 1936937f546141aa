import assert from 'node:assert/strict';
import { call, expectStatus } from './over-http.ts';
import type { ServerProcess } from './server-process.ts';
import { until } from './until.ts';

/**
 * Email verification over HTTP, for tests that run the service as its own process. The service runs without SMTP_URL, so each mail is
 * written to its log (decisions §25), links included: the tests read the links there, as a person
 * reads them in their mail.
 */

const VERIFY_LINK = /https?:\/\/[^\s"'<>\\]+\/api\/email\/verify\?token=[A-Za-z0-9._~%-]+/g;

/** The last link of `pattern` the service logged after `since` (a length of its log). */
export async function linkInLog(server: ServerProcess, since: number, pattern: RegExp, what: string): Promise<string> {
  const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
  return until(`${what} in the server's log`, () => [...server.logs().slice(since).matchAll(global)].at(-1)?.[0], {
    ms: 15_000,
    describe: () => server.logs().slice(since),
  });
}

/** The verification link mailed to `to` after `since`. */
export async function verifyLinkInLog(server: ServerProcess, since: number, to: string): Promise<string> {
  const link = await linkInLog(server, since, VERIFY_LINK, `a verification link for ${to}`);
  assert.ok(server.logs().slice(since).includes(to), `the logged mail goes to ${to}`);
  return link;
}

/**
 * Verifies the owner's address over HTTP, as the app and the mailed link do: POST /api/email/send
 * with the session, then POST /api/email/verify with the link's token. For tests that need a
 * verified owner (the email is shared with sites only once verified) and are about something else.
 */
export async function verifyEmail(server: ServerProcess, session: string | Record<string, string>, email: string): Promise<void> {
  const since = server.logs().length;
  // A cookie header as the browser tests hold it, or the owner's request headers (HttpOwner.auth).
  const headers = typeof session === 'string' ? { cookie: session } : session;
  expectStatus(await call(server, 'POST', '/api/email/send', {}, headers), 200, 'send the verification link');
  const token = new URL(await verifyLinkInLog(server, since, email)).searchParams.get('token') ?? '';
  expectStatus(await call(server, 'POST', '/api/email/verify', { token }), 200, 'verify with the mailed token');
}
