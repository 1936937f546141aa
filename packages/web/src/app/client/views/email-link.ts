// "Send link": asks the service to mail a verification link to the owner's address (POST
// /api/email/send) and says, next to the button, where it went and for how long, or why not. Every
// place that asks the owner to verify uses this one control, so they all read the same.
import { ApiError, api } from '../api.ts';
import { report } from '../actions.ts';
import { button, el } from '../dom.ts';
import { duration, plural } from '../format.ts';
import { reload } from '../loaders.ts';
import type { EmailSent } from '../types.ts';
import { emailNeedsVerifying } from './email-state.ts';

/** "24 hours" rather than "1 day": the mail says hours too, and it reads as a deadline. */
const validFor = (sec: number): string => (sec > 0 && sec % 3600 === 0 ? plural(sec / 3600, 'hour') : duration(sec));

/** 429: when to try again, in whole minutes (the service says seconds). */
function tooOften(e: ApiError): string {
  const minutes = e.retryAfter ? Math.max(1, Math.ceil(e.retryAfter / 60)) : 0;
  const when = minutes ? `try again in ${plural(minutes, 'minute')}` : 'try again later';
  return `A link was asked for too often: ${when}. A link already sent stays valid; look for it in your mail (and its spam folder).`;
}

export interface SendLinkControl {
  /** The button and its status line, to place together. */
  node: HTMLElement;
  button: HTMLButtonElement;
  status: HTMLElement;
}

export function sendLinkControl(label = 'Send link'): SendLinkControl {
  const send = button(label, 'secondary send-link');
  const status = el('p', { className: 'send-link-status', role: 'status', hidden: true });
  const say = (text: string, kind: 'ok' | 'error') => {
    status.textContent = text;
    status.className = `send-link-status ${kind}`;
    status.hidden = false;
  };
  send.addEventListener('click', () => void (async () => {
    send.disabled = true;
    send.setAttribute('aria-busy', 'true');
    send.textContent = 'Sending…';
    status.hidden = true;
    try {
      const sent = await api<EmailSent>('POST', '/api/email/send', {});
      say(`Link sent to ${sent.to}, valid ${validFor(sent.expires_in)}. Open it on any device to verify your address.`, 'ok');
    } catch (e) {
      if (e instanceof ApiError && e.status === 409) {
        say('Your email address is already verified.', 'ok');
        await reload('me').catch(() => undefined);
      } else if (e instanceof ApiError && e.status === 429) {
        say(tooOften(e), 'error');
      } else {
        status.className = 'send-link-status error';
        await report(e, status);
      }
    } finally {
      send.disabled = false;
      send.removeAttribute('aria-busy');
      send.textContent = label;
    }
  })());
  return { node: el('div', { className: 'send-link' }, el('div', { className: 'row' }, send), status), button: send, status };
}

/**
 * A notice that shows only while the email is unverified (email-state.ts keeps it in step):
 * `text` says why it matters here, followed by "Send link".
 */
export function verifyPrompt(className: string, ...text: (Node | string)[]): HTMLElement {
  return el('div', { className: `notice email-prompt while-email-unverified ${className}`, hidden: !emailNeedsVerifying() },
    el('p', {}, ...text),
    sendLinkControl().node);
}
