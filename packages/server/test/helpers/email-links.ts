import assert from 'node:assert/strict';
import { KeyEncryption } from '../../src/crypto/key-encryption.ts';
import { openMail, type Mail } from '../../src/domain/mail/mailer.ts';
import { expectStatus, json, remoteAddress, type TestApp } from './app.ts';

/**
 * Mail in the in-process tests: without SMTP_URL the service queues each mail in the outbox (and
 * writes it to the log when sent); these read it back from the outbox, opening it with the app's
 * KEY_ENCRYPTION_KEY when it is sealed, and follow its link as the owner would.
 */

/** The mails of `kind` queued for `userId`, oldest first. */
export async function mailsOf(t: TestApp, userId: string, kind: string): Promise<Mail[]> {
  const keys = t.config.keyEncryptionKey ? new KeyEncryption(t.config.keyEncryptionKey) : null;
  const rows = await t.services.store.outbox.list({ userId, kind, limit: 1000 });
  return rows.sort((a, b) => a.id - b.id).map((m) => {
    const mail = openMail(m.payload, keys);
    assert.ok(!('error' in mail), 'error' in mail ? mail.error : '');
    return mail;
  });
}

/** The token of the newest link of `kind` mailed to `userId` (`path` checks where it leads). */
export async function lastLinkToken(t: TestApp, userId: string, kind: string, path: string): Promise<string> {
  const mails = await mailsOf(t, userId, kind);
  const mail = mails.at(-1);
  assert.ok(mail, `no ${kind} mail for ${userId}`);
  const link = new URL(/https?:\/\/\S+/.exec(mail.text)?.[0] ?? 'x:');
  assert.equal(link.pathname, path);
  return link.searchParams.get('token') ?? '';
}

/**
 * Verifies the owner's email as they would: POST /api/email/send, then the mailed link's token to
 * POST /api/email/verify (no session).
 */
export async function verifyEmail(t: TestApp, owner: { user: { id: string }; auth: Record<string, string> }): Promise<void> {
  expectStatus(await t.app.inject({ method: 'POST', url: '/api/email/send', headers: owner.auth, payload: {} }), 200);
  const token = await lastLinkToken(t, owner.user.id, 'email_verify', '/api/email/verify');
  const res = await t.app.inject({ method: 'POST', url: '/api/email/verify', remoteAddress: remoteAddress(), payload: { token } });
  expectStatus(res, 200);
  assert.equal(json<{ email_verified: boolean }>(res).email_verified, true);
}
