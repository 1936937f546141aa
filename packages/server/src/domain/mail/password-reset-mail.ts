/**
 * The mail with a link to choose a new password (domain/accounts/password-reset.ts). Sent only to a
 * verified address. Like every mail with a link, the link is a secret: it is in the mail only.
 */
import type { Mail } from './mailer.ts';

export function passwordResetMail(o: { to: string; link: string; minutes: number; baseUrl: string }): Mail {
  return {
    to: o.to,
    subject: 'Choose a new password for Mandate',
    text: [
      'Hello,',
      '',
      `Someone, probably you, said they forgot the password of the Mandate account at ${new URL(o.baseUrl).host} that uses this address.`,
      `Open this link to choose a new password. It works once, for ${o.minutes} minutes, and only the newest such link works:`,
      '',
      o.link,
      '',
      'Choosing a new password signs out every device signed in to the account; your passkeys stay, and approving still needs one.',
      'If you did not ask for this, ignore this mail: nothing changes without the link.',
    ].join('\n'),
  };
}
