// What both consent pages do once the server has checked the request and served the page: ask the
// service for passkey options (needs the session; signed out, the page offers the sign-in and comes
// back), then Approve answers them with the passkey and Deny declines; either way the service answers
// the redirect address of whoever asked (an operator, an app), which the page opens.
import { startAuthentication, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';
import { signInLink } from '../client/return-to.ts';

interface Problem { status: number; detail: string }

export interface ConsentFlow {
  /** Where the options come from, and the body to send. */
  start: { path: string; body: object };
  approvePath: string;
  denyPath: string;
  /** Said while the browser goes back after approving ("Connected", "Approved"). */
  approvedText: string;
}

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

async function post<T>(path: string, body: object): Promise<T> {
  const res = await fetch(path, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json().catch(() => ({}))) as { detail?: unknown };
  if (!res.ok) throw { status: res.status, detail: typeof json.detail === 'string' ? json.detail : `the service answered ${res.status}` } satisfies Problem;
  return json as T;
}

export function runConsent(flow: ConsentFlow): void {
  const status = $<HTMLParagraphElement>('cn-status');
  const approve = $<HTMLButtonElement>('cn-approve');
  const deny = $<HTMLButtonElement>('cn-deny');
  const signIn = $<HTMLAnchorElement>('cn-sign-in');
  const say = (text: string, error = false): void => {
    status.textContent = text;
    status.classList.toggle('cn-error', error);
  };
  let consent: { consent_id: string; options: PublicKeyCredentialRequestOptionsJSON } | undefined;

  const failed = (e: unknown): void => {
    const p = e as Partial<Problem>;
    if (p.status === 401) {
      say('Sign in to Mandate first: you will come back to this page.', true);
      signIn.href = signInLink(location.pathname + location.search);
      signIn.hidden = false;
    } else say(typeof p.detail === 'string' ? p.detail : 'Something went wrong: reload this page to try again.', true);
  };

  void (async () => {
    try {
      consent = await post(flow.start.path, flow.start.body);
      approve.disabled = false;
      deny.disabled = false;
      say('');
    } catch (e) {
      failed(e);
    }
  })();

  approve.addEventListener('click', async () => {
    if (!consent) return;
    approve.disabled = deny.disabled = true;
    say('Confirm with your passkey…');
    try {
      const assertion = await startAuthentication({ optionsJSON: consent.options });
      const { redirect } = await post<{ redirect: string }>(flow.approvePath, { consent_id: consent.consent_id, assertion });
      say(`${flow.approvedText}. Taking you back…`);
      location.assign(redirect);
    } catch (e) {
      // A cancelled passkey prompt uses up nothing but the challenge: reload for fresh options.
      failed(e instanceof Error ? { detail: 'The passkey was not confirmed. Reload this page to try again.' } : e);
    }
  });

  deny.addEventListener('click', async () => {
    if (!consent) return;
    approve.disabled = deny.disabled = true;
    try {
      const { redirect } = await post<{ redirect: string }>(flow.denyPath, { consent_id: consent.consent_id });
      say('Declined. Taking you back…');
      location.assign(redirect);
    } catch (e) {
      failed(e);
    }
  });
}
