// The consent page (/connect, decisions §17) and its error page, filled from the shell in
// app/connect with every value escaped. The page's script and styles are served from appAssets().
import { connectShell } from './app-assets.ts';
import { escapeHtml } from './public/html.ts';

export interface ConnectPageView {
  operatorName: string;
  /** host[:port] of the operator's redirect URIs. */
  domain: string;
  browser: 'operator' | 'user';
  maxAgents: number;
}

export interface ConnectPage {
  body: string;
  type: string;
}

const HTML = 'text/html; charset=utf-8';
const BROWSER_TEXT = {
  operator: 'Its agents\' browser runs on the operator\'s computers.',
  user: 'Its agents\' browser runs on your own computer.',
} as const;

function fill(title: string, body: string, withScript: boolean): ConnectPage {
  const { html, version } = connectShell();
  const script = withScript ? `<script type="module" src="/assets/app/connect.js?v=${version}"></script>` : '';
  // One pass over the placeholders, so a value can never be read as another placeholder.
  const values: Record<string, string> = { __TITLE__: escapeHtml(title), __VERSION__: version, __SCRIPT__: script, __BODY__: body };
  return { body: html.replace(/__(TITLE|VERSION|SCRIPT|BODY)__/g, (m) => values[m] ?? m), type: HTML };
}

/** Who asks, where its agents' browser runs and how many agents it may add; Approve and Deny. */
/** What both consent pages end with: the status line, the sign-in link and the two buttons (app/connect/consent-flow.ts drives them). */
export const CONSENT_ACTIONS = `<p id="cn-status" class="cn-status" role="status" aria-live="polite">Checking your sign-in…</p>
      <a id="cn-sign-in" href="/app" hidden>Sign in to Mandate</a>
      <div class="cn-row">
        <button type="button" id="cn-deny" disabled>Deny</button>
        <button type="button" id="cn-approve" disabled>Approve with passkey</button>
      </div>`;

export function connectPage(v: ConnectPageView): ConnectPage {
  const body = `<section class="cn-card" aria-labelledby="cn-title">
      <h1 id="cn-title">Connect ${escapeHtml(v.operatorName)}?</h1>
      <p class="cn-domain">${escapeHtml(v.domain)}</p>
      <ul class="cn-facts">
        <li>It may add up to <strong id="cn-limit">${v.maxAgents}</strong> agents to your account.</li>
        <li id="cn-browser">${escapeHtml(BROWSER_TEXT[v.browser])}</li>
        <li>It never sees your email, phone, other agents, approvals or activity.</li>
      </ul>
      ${CONSENT_ACTIONS}
    </section>`;
  return fill(`Connect ${v.operatorName}`, body, true);
}

/** A link that cannot be honoured: said plainly, and nothing is redirected anywhere. */
export function connectErrorPage(message: string): ConnectPage {
  const body = `<section class="cn-card">
      <h1>This connection link does not work</h1>
      <p id="cn-error" class="cn-status cn-error">${escapeHtml(message)}</p>
      <p>Go back to the service that sent you here and start again. Nothing was connected.</p>
    </section>`;
  return fill('Connection link problem', body, false);
}
