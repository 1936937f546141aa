/**
 * The mails Mandate sends, as plain text. A link in them is a secret (it acts for the owner): it
 * appears in the mail only, never in a push, the inbox or the log (except the development mode of
 * delivery, without SMTP_URL, which writes the whole mail to the log).
 */
import type { Mail } from './mailer.ts';

/** "2026-01-15 09:05 UTC": unambiguous in any mail reader, whatever its time zone. */
export const mailTime = (ms: number): string => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

const hostOf = (baseUrl: string): string => new URL(baseUrl).host;

export function verifyEmailMail(o: { to: string; link: string; hours: number; baseUrl: string }): Mail {
  return {
    to: o.to,
    subject: 'Verify your email address for Mandate',
    text: [
      'Hello,',
      '',
      `Someone, probably you, asked to use this address for a Mandate account at ${hostOf(o.baseUrl)}.`,
      `Open this link to confirm it. It works once, for ${o.hours} hours:`,
      '',
      o.link,
      '',
      'Until the address is verified, Mandate does not share it with sites and cannot mail you about your account.',
      'If you did not ask for this, ignore this mail: nothing changes without the link.',
    ].join('\n'),
  };
}

/** The take-over link (address-takeover.ts): to an address that an account holds without having verified it. */
export function takeoverMail(o: { to: string; link: string; hours: number; baseUrl: string }): Mail {
  return {
    to: o.to,
    subject: 'Confirm your email address for your new Mandate account',
    text: [
      'Hello,',
      '',
      `Someone, probably you, signed up for a Mandate account at ${hostOf(o.baseUrl)} with this address.`,
      'Another account already uses the address, but never proved it is theirs.',
      `Open this link to prove it is yours, and enter the password you chose at sign-up. It works once, for ${o.hours} hours:`,
      '',
      o.link,
      '',
      'Confirming creates the new account with this address, verified, and takes the address from the other account.',
      'If the other account is yours, sign in to it instead and verify the address from Account.',
      'If you did not sign up, ignore this mail: nothing changes without the link and that password.',
    ].join('\n'),
  };
}

export function firstPasskeyMail(o: { to: string; name: string; at: number; link: string; hours: number; baseUrl: string }): Mail {
  return {
    to: o.to,
    subject: 'A passkey was added to your Mandate account',
    text: [
      'Hello,',
      '',
      `A passkey, "${o.name}", was added to your Mandate account at ${hostOf(o.baseUrl)} on ${mailTime(o.at)}.`,
      'It is the first passkey of the account: it can now sign in and approve what your agents ask for.',
      '',
      'If it was you, there is nothing to do.',
      '',
      `If it was not you, someone knows your password. Open this link to remove that passkey and sign out everywhere (it works once, for ${o.hours} hours):`,
      '',
      o.link,
      '',
      'Then sign in and change your password.',
    ].join('\n'),
  };
}

export function emailChangedMail(o: { to: string; newEmail: string; at: number; baseUrl: string }): Mail {
  return {
    to: o.to,
    subject: 'The email address of your Mandate account was changed',
    text: [
      'Hello,',
      '',
      `On ${mailTime(o.at)} the email address of your Mandate account at ${hostOf(o.baseUrl)} was changed from this address to ${o.newEmail}.`,
      'Mandate will not write to this address about the account any more.',
      '',
      'If it was not you, someone could sign in to your account: sign in with your passkey, change the address back and change your password.',
    ].join('\n'),
  };
}
