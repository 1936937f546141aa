// The consent page of a person's browser at /oidc/authorize (decisions §28) and its error page,
// filled from the /connect shell (app/connect) with every value escaped. The app's logo and website
// are shown as text, never loaded: the service fetches nothing an app names but its metadata document.
import { connectShell } from './app-assets.ts';
import { CONSENT_ACTIONS, type ConnectPage } from './connect-page.ts';
import { escapeHtml } from './public/html.ts';

export interface AppConsentPageView {
  clientName: string;
  /** Where the app comes from: its client_id URL's host, the site of an owner's client, or "self-registered". */
  clientMark: string;
  clientId: string;
  /** The resource URL; null for a plain sign-in. */
  resource: string | null;
  /** The resource's host, or the redirect URI's host for a plain sign-in. */
  site: string;
  scopes: string[];
  redirectHost: string;
  warnings: string[];
  clientUri: string | null;
  logoUri: string | null;
}

const HTML = 'text/html; charset=utf-8';

function fill(title: string, body: string, withScript: boolean): ConnectPage {
  const { html, version } = connectShell();
  const script = withScript ? `<script type="module" src="/assets/app/app-consent.js?v=${version}"></script>` : '';
  // One pass over the placeholders, so a value can never be read as another placeholder.
  const values: Record<string, string> = { __TITLE__: escapeHtml(title), __VERSION__: version, __SCRIPT__: script, __BODY__: body };
  return { body: html.replace(/__(TITLE|VERSION|SCRIPT|BODY)__/g, (m) => values[m] ?? m), type: HTML };
}

const scopeList = (scopes: readonly string[]): string =>
  scopes.length === 0 ? 'no particular scope' : scopes.map((s) => `<code>${escapeHtml(s)}</code>`).join(', ');

/** Who asks, for what, where; warnings first; Approve (passkey) and Deny. */
export function appConsentPage(v: AppConsentPageView): ConnectPage {
  const who = `<strong>${escapeHtml(v.clientName)}</strong> (${escapeHtml(v.clientMark)})`;
  const what = v.resource === null
    ? `${who} wants to sign you in at <strong>${escapeHtml(v.site)}</strong> with ${scopeList(v.scopes)}.`
    : `${who} wants to act for you at <strong class="ac-resource">${escapeHtml(v.resource)}</strong> with ${scopeList(v.scopes)}.`;
  const warnings = v.warnings.length === 0 ? '' : `<ul class="cn-warnings" id="ac-warnings">${v.warnings.map((w) => `<li class="cn-warning">${escapeHtml(w)}</li>`).join('')}</ul>`;
  const about = [
    v.clientUri === null ? '' : `<li>Its website, as the app states it (not checked): <code>${escapeHtml(v.clientUri)}</code></li>`,
    v.logoUri === null ? '' : `<li>Its logo address (not loaded): <code>${escapeHtml(v.logoUri)}</code></li>`,
    `<li>Client ID: <code>${escapeHtml(v.clientId)}</code></li>`,
  ].join('');
  const body = `<section class="cn-card" aria-labelledby="cn-title">
      <h1 id="cn-title">Allow ${escapeHtml(v.clientName)}?</h1>
      <p class="cn-domain">${escapeHtml(v.clientMark)}</p>
      <p id="ac-what">${what}</p>
      ${warnings}
      <ul class="cn-facts">
        <li>It appears under Agents as an app; you can revoke it there at any time.</li>
        <li>Your answer is sent to <strong id="ac-redirect">${escapeHtml(v.redirectHost)}</strong>.</li>
        ${about}
      </ul>
      ${CONSENT_ACTIONS}
    </section>`;
  return fill(`Allow ${v.clientName}`, body, true);
}

/** A request that cannot be honoured: said plainly, and nothing is redirected anywhere. */
export function appConsentErrorPage(message: string): ConnectPage {
  const body = `<section class="cn-card">
      <h1>This sign-in link does not work</h1>
      <p id="cn-error" class="cn-status cn-error">${escapeHtml(message)}</p>
      <p>Go back to the app that sent you here and start again. Nothing was approved.</p>
    </section>`;
  return fill('Sign-in link problem', body, false);
}
