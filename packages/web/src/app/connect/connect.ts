// The consent page (/connect, decisions §17). The server has checked the link (operator on, redirect
// URI registered, PKCE S256) before serving this page. Here: /api/connect/start with the link's
// fields (needs the session), then Approve answers the passkey options (/finish) and Deny declines
// (/deny); either way the service answers the operator's redirect address, which this page opens.
import { startAuthentication, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';
import { signInLink } from '../client/return-to.ts';

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const FIELDS = ['operator', 'redirect_uri', 'state', 'code_challenge', 'code_challenge_method'] as const;

interface Problem { status: number; detail: string }

async function post<T>(path: string, body: object): Promise<T> {
  const res = await fetch(path, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json().catch(() => ({}))) as { detail?: unknown };
  if (!res.ok) throw { status: res.status, detail: typeof json.detail === 'string' ? json.detail : `the service answered ${res.status}` } satisfies Problem;
  return json as T;
}

function start(): void {
  const status = $<HTMLParagraphElement>('cn-status');
  const approve = $<HTMLButtonElement>('cn-approve');
  const deny = $<HTMLButtonElement>('cn-deny');
  const signIn = $<HTMLAnchorElement>('cn-sign-in');
  const say = (text: string, error = false): void => {
    status.textContent = text;
    status.classList.toggle('cn-error', error);
  };
  const query = new URLSearchParams(location.search);
  const link: Record<string, string> = {};
  for (const f of FIELDS) {
    const v = query.get(f);
    if (v !== null) link[f] = v;
  }
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
      consent = await post('/api/connect/start', link);
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
      const { redirect } = await post<{ redirect: string }>('/api/connect/finish', { consent_id: consent.consent_id, assertion });
      say('Connected. Taking you back…');
      location.assign(redirect);
    } catch (e) {
      // A cancelled passkey prompt uses up nothing but the challenge: start again for fresh options.
      failed(e instanceof Error ? { detail: 'The passkey was not confirmed. Reload this page to try again.' } : e);
    }
  });

  deny.addEventListener('click', async () => {
    if (!consent) return;
    approve.disabled = deny.disabled = true;
    try {
      const { redirect } = await post<{ redirect: string }>('/api/connect/deny', { consent_id: consent.consent_id });
      say('Declined. Taking you back…');
      location.assign(redirect);
    } catch (e) {
      failed(e);
    }
  });
}

start();
