import { createHash, randomBytes } from 'node:crypto';
import { expectStatus, json, signUp, type TestApp } from './app.ts';

/** Helpers for the operator tests: HTTP Basic, an operator switched on, PKCE pairs. */

export const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });

export interface ActiveOperator {
  id: string;
  secret: string;
  redirectUri: string;
  /** Authorization: Basic op_id:secret. */
  auth: Record<string, string>;
}

/**
 * An operator registered over HTTP by a fresh person, its domain marked verified and switched on in
 * the store (the domain check and the admin switch have their own tests: operators*.test.ts).
 */
export async function activeOperator(t: TestApp, opts: { name?: string; redirectUris?: string[]; browser?: 'operator' | 'user'; status?: 'active' | 'pending' | 'disabled' } = {}): Promise<ActiveOperator> {
  const registrant = await signUp(t.app);
  const redirectUris = opts.redirectUris ?? ['https://acme.example/cb', 'https://acme.example/cb2'];
  const res = await t.app.inject({ method: 'POST', url: '/api/operators', headers: registrant.auth, payload: { name: opts.name ?? 'Acme agents', redirect_uris: redirectUris, browser: opts.browser ?? 'operator' } });
  expectStatus(res, 200);
  const { id, secret } = json<{ id: string; secret: string }>(res);
  await t.services.store.operators.markVerified(id, t.clock.now());
  const status = opts.status ?? 'active';
  if (status !== 'pending') await t.services.store.operators.switchStatus(id, ['pending'], 'active', t.clock.now());
  if (status === 'disabled') await t.services.store.operators.switchStatus(id, ['active'], 'disabled', t.clock.now());
  return { id, secret, redirectUri: redirectUris[0] as string, auth: basic(id, secret) };
}

/** A PKCE pair: a fresh code_verifier and its S256 code_challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier, 'ascii').digest('base64url') };
}
