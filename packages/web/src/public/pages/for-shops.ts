import { docHref, hasDoc, type SiteContext } from '../context.ts';
import { html } from '../html.ts';
import { layout } from '../layout.ts';

const VERIFY_EXAMPLE = `POST /api/v1/verify
{"access_token": "<the pass>", "dpop": "<the proof>", "method": "GET",
 "url": "https://shop.example/orders", "site": "shop.example"}

200 {"valid": true, "agent_id": "ag_…", "agent_name": "Shopping helper",
     "user_id": "u_…", "site": "shop.example", "scopes": ["list", "orders:read"],
     "user_info": {}, "stepup": false}
200 {"valid": false, "error": "dpop_replay", "error_description": "…"}`;

export function forShopsPage(ctx: SiteContext): string {
  const siteSdk = ctx.docs.find('sites', 'sdk');
  const quickstart = docHref(ctx, 'sites', 'quickstart');
  const main = html`
<section class="hero hero-small">
  <div class="wrap">
    <p class="eyebrow">For sites and shops</p>
    <h1>Let AI agents in, on terms a person approved</h1>
    <p class="lead">Agents already shop, book and file forms for people, usually with the person's password or by
    imitating a browser. With Mandate, each agent request tells you which agent is calling, for which person, with which
    permissions, and proves that the person approved any sensitive action one by one.</p>
    <p class="actions"><a class="button" href="${quickstart}">Site quickstart</a>${siteSdk ? html` <a class="button secondary" href="${siteSdk.path}">The site SDK</a>` : ''}</p>
  </div>
</section>

<section class="wrap block" aria-labelledby="why">
  <h2 id="why">Why integrate</h2>
  <ul class="facts">
    <li><h3>No passwords in agents' hands</h3><p>People stop handing their credentials to software. Your sign-in stays for people; agents carry passes.</p></li>
    <li><h3>Permissions you define</h3><p>You publish scopes (<code>list</code>, <code>orders:read</code>, <code>checkout</code>); the person sees them as written and approves some or all.</p></li>
    <li><h3>Proof for sensitive actions</h3><p>Payments and deletions need a step-up: the person's passkey approval of that exact action, valid once, for 60 seconds.</p></li>
    <li><h3>Accountability</h3><p>Every request names the agent and a stable user id. Report misbehaviour and it counts against the agent's public reputation.</p></li>
  </ul>
</section>

<section class="band" aria-labelledby="how">
  <div class="wrap block">
    <h2 id="how">How a site integrates</h2>
    <ol class="steps">
      <li><strong>Decide three things.</strong> Your site id (your public host name, such as <code>shop.example</code>),
      your scopes (1 to 64 characters of <code>a-z 0-9 _ : . -</code>), and the exact text of each step-up action
      (<code>pay order 42</code>), which you publish for agent developers.</li>
      <li><strong>Verify every agent request.</strong> Requests arrive with <code>Authorization: Bearer &lt;pass&gt;</code>,
      <code>DPoP: &lt;proof&gt;</code> and, for sensitive actions, <code>X-Service-Stepup: &lt;token&gt;</code>. Rebuild the
      URL the agent called from your configured public address plus the path, and verify.</li>
      <li><strong>Answer by the site rules</strong> below, so every agent knows what to do next.</li>
      <li><strong>Report</strong> agents that spam, scrape or abuse your site with <code>POST /api/v1/reports</code>, and good
      ones too.</li>
    </ol>
    <p>One call is all cloud mode needs. It always answers HTTP 200 with a verdict; anything else means no verdict, and
    you refuse the request:</p>
    <pre><code>${VERIFY_EXAMPLE}</code></pre>
    ${siteSdk
      ? html`<p>The site SDK, <code>@mandate/site</code>, does this for you: verification in cloud or local mode, the URL
      rebuilding, the site rules as middleware for <code>node:http</code>, Express and Fastify, and reports.
      <a href="${siteSdk.path}">Read the SDK guide</a>.</p>`
      : html`<p>Any language that can make an HTTPS call can do this; the <a href="${quickstart}">site quickstart</a> shows
      a complete Node.js site.</p>`}
  </div>
</section>

<section class="wrap block" aria-labelledby="modes">
  <h2 id="modes">Cloud or local verification</h2>
  <div class="table-wrap">
    <table>
      <thead><tr><th scope="col"></th><th scope="col">Cloud mode</th><th scope="col">Local mode</th></tr></thead>
      <tbody>
        <tr><th scope="row">Per request</th><td>One call to <code>POST /api/v1/verify</code></td><td>No call: signatures checked against <code>/api/v1/jwks</code></td></tr>
        <tr><th scope="row">Revocation</th><td>At once</td><td>With the next signed revocation list, fetched about every 60 s</td></tr>
        <tr><th scope="row">Agent's name</th><td>In the verdict</td><td>Not in the pass (agent id only)</td></tr>
        <tr><th scope="row">Step-ups</th><td>Checked and used up in the same call</td><td>Always confirmed with <code>POST /api/v1/stepup/verify</code></td></tr>
        <tr><th scope="row">Mandate unreachable</th><td>Refuse the request</td><td>Keep verifying until the list is older than 5 minutes (default), then refuse</td></tr>
        <tr><th scope="row">One-time proofs</th><td>Mandate remembers every proof id</td><td>You keep a replay cache shared by your servers</td></tr>
      </tbody>
    </table>
  </div>
  <p>Start with cloud mode; switch to local mode when the extra round trip matters.</p>
</section>

<section class="band" aria-labelledby="rules">
  <div class="wrap block">
    <h2 id="rules">The site rules</h2>
    <ol class="rules">
      <li>A failed verification is answered <code>401</code> with <code>{"error": "&lt;reason&gt;"}</code>, the code from the verdict.</li>
      <li>A pass without the scope the route needs is answered <code>403 {"error": "insufficient_scope"}</code>.</li>
      <li>A sensitive action without a valid step-up is answered <code>403 {"error": "stepup_required"}</code>; the agent then asks its owner and retries.</li>
      <li>Cheap checks come first: does the order exist, is it already paid? A step-up is used up the moment verification accepts it, so reject what you can before verifying.</li>
      <li>Scopes are yours: short lower-case names, shown to the person exactly as written.</li>
    </ol>
    <p class="more"><a href="${quickstart}">Step by step in the site quickstart</a>${hasDoc(ctx, 'reference', 'api') ? html` · <a href="${docHref(ctx, 'reference', 'api')}#passes-tokens-and-verification">every verification error code</a>` : ''}</p>
  </div>
</section>`;
  return layout(ctx, {
    path: '/for-shops',
    title: 'Mandate for sites and shops',
    description: 'Why and how a site lets AI agents in with Mandate: verify each request in cloud or local mode, define scopes, require one-time step-ups for sensitive actions, follow the site rules.',
    nav: 'shops',
  }, main);
}
