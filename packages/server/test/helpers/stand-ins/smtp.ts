/**
 * An SMTP server on 127.0.0.1 for tests (smtp-server, parsed with mailparser): plays the operator's
 * mail relay behind SMTP_URL. It requires AUTH with the user and password of its URL (plain text,
 * no STARTTLS: a test relay on loopback) and checks every message the way a careful relay and its
 * reader would: the envelope sender is MAIL_FROM's address and matches From, the envelope
 * recipients match To, Subject, Date and Message-ID are set, the body is plain text only, and every
 * link in it points at the service's BASE_URL (`expectBaseUrl`). What fails a check is kept in
 * `problems` (the message is still accepted, so the test sees both). `failNext` makes the next
 * deliveries fail with a temporary 451, as a busy relay does. Test code only: never imported by src/.
 */
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';
import { simpleParser, type AddressObject } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { until } from '../until.ts';

export interface ReceivedMail {
  /** Envelope (MAIL FROM / RCPT TO). */
  envelopeFrom: string;
  envelopeTo: string[];
  /** Header From address and display name. */
  from: string;
  to: string[];
  subject: string;
  text: string;
  /** Every http(s) link in the text, in order. */
  links: string[];
  /** The user it authenticated as. */
  user: string;
}

export interface SmtpStandIn {
  /** `smtp://user:pass@127.0.0.1:port`: SMTP_URL for the service under test. */
  readonly url: string;
  readonly user: string;
  readonly pass: string;
  readonly messages: ReceivedMail[];
  /** Checks that failed, one line each; a test asserts it stays empty. */
  readonly problems: string[];
  /** Failed AUTH attempts (wrong user or password). */
  readonly authFailures: number;
  expectBaseUrl(baseUrl: string): void;
  /** The next `n` messages are refused with 451 (temporary) after their data is sent. */
  failNext(n: number): void;
  /** Waits for the `index`-th (0-based) message to `to`, at most `ms`. */
  mailTo(to: string, opts?: { index?: number; ms?: number }): Promise<ReceivedMail>;
  close(): Promise<void>;
}

const addressesOf = (a: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(a) ? a : a ? [a] : []).flatMap((o) => o.value.map((v) => (v.address ?? '').toLowerCase()));

export async function startSmtpStandIn(opts: { user?: string; pass?: string; from: string }): Promise<SmtpStandIn> {
  const user = opts.user ?? 'mandate-mailer';
  const pass = opts.pass ?? 's3cret-smtp-pass-9d1e';
  const expectedFrom = (/<([^>]+)>/.exec(opts.from)?.[1] ?? opts.from).toLowerCase();
  const expectedName = /^\s*"?([^"<]*?)"?\s*</.exec(opts.from)?.[1] ?? '';
  const messages: ReceivedMail[] = [];
  const problems: string[] = [];
  let baseUrl: string | undefined;
  let failing = 0;
  let authFailures = 0;

  const server = new SMTPServer({
    authOptional: false,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === pass) return callback(null, { user });
      authFailures++;
      return callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      void simpleParser(stream).then((parsed) => {
        const problem = (p: string) => problems.push(`${parsed.subject ?? '(no subject)'}: ${p}`);
        const envelopeFrom = session.envelope.mailFrom === false ? '' : (session.envelope.mailFrom as SMTPServerAddress).address.toLowerCase();
        const envelopeTo = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
        const from = addressesOf(parsed.from);
        const to = addressesOf(parsed.to);
        const text = parsed.text ?? '';
        if (envelopeFrom !== expectedFrom) problem(`envelope sender ${envelopeFrom}, expected ${expectedFrom}`);
        if (from.length !== 1 || from[0] !== expectedFrom) problem(`From ${from.join(', ')}, expected ${expectedFrom}`);
        const name = Array.isArray(parsed.from) ? undefined : parsed.from?.value[0]?.name;
        if (expectedName && name !== expectedName) problem(`From name ${JSON.stringify(name)}, expected ${JSON.stringify(expectedName)}`);
        if ([...to].sort().join() !== [...envelopeTo].sort().join()) problem(`To ${to.join(', ')} differs from the envelope ${envelopeTo.join(', ')}`);
        if (!parsed.subject) problem('no Subject');
        if (!parsed.date) problem('no Date');
        if (!parsed.messageId) problem('no Message-ID');
        if (parsed.html !== false) problem('has an HTML part: mail is sent as plain text only');
        if (parsed.attachments.length) problem('has attachments');
        if (!text.trim()) problem('empty text');
        const links = [...text.matchAll(/https?:\/\/[^\s<>"]+/g)].map((m) => m[0]);
        if (baseUrl === undefined && links.length) problem('a link arrived before expectBaseUrl');
        for (const link of links) if (baseUrl !== undefined && !link.startsWith(`${baseUrl}/`)) problem(`link ${link} is not for ${baseUrl}`);
        messages.push({ envelopeFrom, envelopeTo, from: from[0] ?? '', to, subject: parsed.subject ?? '', text, links, user: String(session.user ?? '') });
        if (failing > 0) {
          failing--;
          return callback(Object.assign(new Error('Try again later'), { responseCode: 451 }));
        }
        return callback();
      }, (err: unknown) => {
        problems.push(`unparseable message: ${String(err)}`);
        callback(Object.assign(new Error('cannot parse'), { responseCode: 554 }));
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://${encodeURIComponent(user)}:${encodeURIComponent(pass)}@127.0.0.1:${port}`,
    user,
    pass,
    messages,
    problems,
    get authFailures() {
      return authFailures;
    },
    expectBaseUrl(url) {
      baseUrl = url.replace(/\/+$/, '');
    },
    failNext(n) {
      failing = n;
    },
    mailTo(to, o = {}) {
      const want = to.toLowerCase();
      return until(`mail #${o.index ?? 0} to ${to}`, async () => messages.filter((m) => m.to.includes(want))[o.index ?? 0], { ms: o.ms ?? 15_000 });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
