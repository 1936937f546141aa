/**
 * Mail over SMTP (decisions §25), through nodemailer. SMTP_URL names the operator's own mail server,
 * not an address someone else chose, so the outbound guard of decisions §24 does not apply (it
 * would refuse the private or loopback relay many operators use). Timeouts keep one send well under
 * an outbox claim (OUTBOX_CLAIM_SECONDS, 60 s by default). The SMTP password is never logged:
 * nodemailer's own logger stays off and any error text has the URL's credentials taken out.
 */
import { createTransport } from 'nodemailer';
import type { Mail } from '../domain/mail/mailer.ts';
import type { SendResult } from './push-port.ts';

export interface MailTransport {
  send(mail: Mail): Promise<SendResult>;
}

/** The credentials of an SMTP URL as they may appear in text (raw and URL-decoded), for scrubbing. */
function secretsOf(smtpUrl: string): string[] {
  try {
    const url = new URL(smtpUrl);
    return [url.password, decodeURIComponent(url.password), url.username && url.password ? `${url.username}:${url.password}` : ''].filter((s) => s.length >= 3);
  } catch {
    return [];
  }
}

/**
 * Permanent refusals (5xx to the envelope or the message: no such recipient, policy) are not retried;
 * everything else (connection, timeout, 4xx, authentication, which the operator may yet fix) is, by
 * the outbox's backoff.
 */
function outcomeOf(err: unknown, scrub: (text: string) => string): SendResult {
  const e = err as { code?: unknown; responseCode?: unknown; message?: unknown } | null;
  const detail = scrub(`SMTP: ${typeof e?.message === 'string' ? e.message : String(err)}`).slice(0, 300);
  const status = typeof e?.responseCode === 'number' ? e.responseCode : 0;
  const permanent = status >= 500 && status < 600 && (e?.code === 'EENVELOPE' || e?.code === 'EMESSAGE');
  return permanent ? { outcome: 'failed', detail } : { outcome: 'retry', detail };
}

export function smtpMailTransport(settings: { smtpUrl: string; from: string }): MailTransport {
  const secrets = secretsOf(settings.smtpUrl);
  const scrub = (text: string): string => secrets.reduce((t, s) => t.split(s).join('[redacted]'), text);
  const transport = createTransport({
    url: settings.smtpUrl,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
    logger: false,
    debug: false,
    // Only text is sent; nothing may read files or fetch URLs on the mail's behalf.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    async send(mail) {
      try {
        const info = await transport.sendMail({ from: settings.from, to: mail.to, subject: mail.subject, text: mail.text });
        const rejected = (info.rejected ?? []).length;
        if (rejected > 0) return { outcome: 'failed', detail: scrub(`SMTP: the server refused the recipient: ${String(info.response ?? '')}`).slice(0, 300) };
        return { outcome: 'sent' };
      } catch (err) {
        return outcomeOf(err, scrub);
      }
    },
  };
}
