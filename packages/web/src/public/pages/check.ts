import { docHref, type SiteContext } from '../context.ts';
import { html, type SafeHtml } from '../html.ts';
import { layout } from '../layout.ts';

type Key = 'https' | 'reachable' | 'verification_file' | 'oidc_client' | 'operator';

/** A readiness answer (GET /api/readiness, decisions §22): five booleans, and why each is what it is in `details`. */
export type CheckReport = { site: string } & Record<Key, boolean> & {
  details: Record<Key, string>;
  checked_at: string;
};

/** What /check shows: the form alone, a result, or why there is none (bad site, too many checks). */
export interface CheckView {
  site: string;
  report?: CheckReport;
  error?: string;
}

/** Each line: what it is, whether a site needs it, and what to do when it fails. */
function lines(ctx: SiteContext): { key: Key; label: string; optional: boolean; next: SafeHtml }[] {
  return [
    { key: 'https', label: 'Answers over https', optional: false, next: html`Serve the site over https with a certificate from a public certificate authority (Let's Encrypt is free). Agents sign every request for its https address, and this service fetches nothing over plain http.` },
    { key: 'reachable', label: 'Reachable from this service', optional: false, next: html`Make sure the host name resolves to a public address and the site answers within 5 seconds without an error (500 or above). Addresses of private networks are never fetched.` },
    { key: 'verification_file', label: 'Verification file', optional: true, next: html`Publish <code>/.well-known/service-site.txt</code> with the line the app shows for your OIDC client or operator (<code>mandate-client=…</code> or <code>mandate-operator=…</code>) on a line of its own, answered with status 200 and no redirect. Then press Verify in the app.` },
    { key: 'oidc_client', label: 'OIDC client registered here', optional: true, next: html`Only to sign agents in with OpenID Connect: in the <a href="/app#sites">app, Sites</a>, register a client with a redirect URI on this host. <a href="${docHref(ctx, 'sites', 'oidc')}">The OIDC guide</a>.` },
    { key: 'operator', label: 'Operator registered here', optional: true, next: html`Only for companies that run agents for many people: register as an operator in the app. <a href="${docHref(ctx, 'operators', 'registering')}">Operators</a>.` },
  ];
}

function result(ctx: SiteContext, report: CheckReport): SafeHtml {
  return html`<section class="check-result" aria-labelledby="result">
  <h2 id="result">${report.site}</h2>
  <p class="more">Checked at ${report.checked_at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}; answers are kept 10 minutes.</p>
  <ul class="check-lines">
    ${lines(ctx).map((l) => {
      const ok = report[l.key];
      return html`<li class="${ok ? 'check-ok' : l.optional ? 'check-optional' : 'check-fail'}">
      <h3><span class="check-mark">${ok ? 'Yes' : 'No'}</span> ${l.label}${l.optional ? html` <small>(optional)</small>` : ''}</h3>
      <p>${report.details[l.key]}</p>
      ${ok ? '' : html`<p class="check-next"><strong>What to do:</strong> ${l.next}</p>`}
    </li>`;
    })}
  </ul>
</section>`;
}

/** GET /check?site=: the HTML twin of GET /api/readiness. */
export function checkPage(ctx: SiteContext, view: CheckView): string {
  const main = html`
<section class="hero hero-small">
  <div class="wrap">
    <p class="eyebrow">For site owners</p>
    <h1>Is your site ready for agents?</h1>
    <p class="lead">Enter your site's host name. This service fetches its verification file once (https only, public
    addresses only, no redirects followed) and says what it found and what is registered here for that host.</p>
    <form class="check-form" method="get" action="/check">
      <label for="site">Site</label>
      <input id="site" name="site" type="text" inputmode="url" autocomplete="url" spellcheck="false" placeholder="shop.example" value="${view.site}" maxlength="2048" required>
      <button class="button" type="submit">Check</button>
    </form>
  </div>
</section>
<div class="wrap block">
  ${view.error ? html`<p class="check-error" role="alert">${view.error}</p>` : ''}
  ${view.report ? result(ctx, view.report) : ''}
  <p class="more">The same answer as JSON: <code>GET /api/readiness?site=</code>. <a href="${docHref(ctx, 'sites', 'readiness')}">What each line means</a>.</p>
</div>`;
  return layout(ctx, {
    path: '/check',
    title: view.report ? `Readiness of ${view.report.site}` : 'Check a site',
    description: 'Check whether a site is ready for agents with this Mandate instance: https, reachability, the verification file, and the OIDC client or operator registered for it.',
    noindex: view.site !== '',
  }, main);
}
