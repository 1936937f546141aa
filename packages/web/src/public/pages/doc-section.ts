import { docHref, type SiteContext } from '../context.ts';
import type { DocSection } from '../docs/docs-tree.ts';
import { html, type SafeHtml } from '../html.ts';
import { layout } from '../layout.ts';
import { pageList } from './docs-index.ts';
import { docSidebar } from './doc-sidebar.ts';

/** `/docs/{section}`: the section's pages; `/docs/agents` adds the landing page for agent developers. */
export function docSectionPage(ctx: SiteContext, section: DocSection): string {
  const intro = section.name === 'agents' ? agentsLanding(ctx, section) : html`
    <h1>${section.title}</h1>
    ${section.summary ? html`<p class="lead">${section.summary}</p>` : ''}
    ${pageList(section)}`;
  const main = html`
<div class="wrap doc-layout">
  <article class="prose">
    <nav class="breadcrumb" aria-label="Breadcrumb"><a href="/docs">Docs</a></nav>
    ${intro}
  </article>
  ${docSidebar(ctx, section.path)}
</div>`;
  return layout(ctx, {
    path: section.path,
    title: section.name === 'agents' ? 'Mandate for agent developers' : section.title,
    description: section.summary || `${section.title}: Mandate documentation.`,
    nav: 'docs',
  }, main);
}

function agentsLanding(ctx: SiteContext, section: DocSection): SafeHtml {
  const sdk = ctx.docs.find('agents', 'sdk');
  const cli = ctx.docs.find('agents', 'cli');
  const unattended = ctx.docs.find('agents', 'unattended');
  const api = docHref(ctx, 'reference', 'api');
  return html`
    <h1>Mandate for agent developers</h1>
    <p class="lead">Your agent acts for a person. Instead of that person's password it carries a pass: a short-lived
    token that says what the person approved, for one site, bound to your agent's own key. This section shows how to get
    one and use it.</p>
    ${sdk || cli ? html`<p>Use ${sdk ? html`the <a href="${sdk.path}">agent SDK</a>` : ''}${sdk && cli ? ' or ' : ''}${cli ? html`the <a href="${cli.path}">command-line tool</a>` : ''}
    to skip the protocol details, or follow the quickstart to see every call in plain HTTP.</p>` : ''}

    <h2 id="pages">Guides</h2>
    ${pageList(section)}

    <h2 id="flow">The flow in calls</h2>
    <div class="table-wrap">
      <table>
        <thead><tr><th scope="col">Step</th><th scope="col">Call</th><th scope="col">Answer</th></tr></thead>
        <tbody>
          <tr><td>The owner registers your public key</td><td><code>POST /api/agents</code> (owner's session), or pasted in <a href="/app">the app</a></td><td>your agent id, <code>ag_…</code></td></tr>
          <tr><td>Ask for access to a site</td><td><code>POST /api/v1/authz-requests</code></td><td><code>txn_id</code>, 300 s for the owner to answer</td></tr>
          <tr><td>Wait for the owner</td><td><code>GET /api/v1/authz-requests/{txn_id}</code>, every 2 s or so</td><td><code>pending</code>, then <code>approved</code>, <code>denied</code> or <code>expired</code></td></tr>
          <tr><td>Get or renew a pass</td><td><code>POST /api/v1/token</code></td><td>pass (600 s) and a single-use refresh token</td></tr>
          <tr><td>Call the site</td><td><code>Authorization: Bearer &lt;pass&gt;</code> and a fresh <code>DPoP</code> proof per request</td><td>the site's answer</td></tr>
          <tr><td>Sensitive action</td><td><code>POST /api/v1/stepup</code>, then poll with <code>X-Agent-JWT</code></td><td>a step-up token, sent once as <code>X-Service-Stepup</code></td></tr>
          <tr><td>Ask before acting on any site</td><td><code>POST /api/v1/agent-approval</code>, then poll like any request${unattended ? html` (<a href="${unattended.path}">approval modes, plans, take-overs</a>)` : ''}</td><td><code>approved</code> at once by the owner's mode or plan, else a card</td></tr>
          <tr><td>Am I still allowed?</td><td><code>GET /api/v1/agent-status</code></td><td><code>global_flag</code> and revoked sites</td></tr>
          <tr><td>Tell the owner</td><td><code>POST /api/v1/agent-notify</code>, <code>POST /api/v1/agent-status</code></td><td>a note, or a status on the owner's dashboard</td></tr>
        </tbody>
      </table>
    </div>
    <p>Every call to Mandate is authenticated by an <em>agent JWT</em>: ES256, signed by your agent's key, with
    <code>iss</code> and <code>sub</code> set to the agent id, <code>type</code> <code>agent</code>, and at most 900 seconds
    between <code>iat</code> and <code>exp</code>.</p>

    <h2 id="numbers">Numbers to know</h2>
    <div class="table-wrap">
      <table>
        <tbody>
          <tr><th scope="row">Pass</th><td>600 s, or less if the grant ends sooner</td></tr>
          <tr><th scope="row">First pass without a refresh token</th><td>within one hour of the approval; afterwards only with your latest refresh token</td></tr>
          <tr><th scope="row">DPoP proof</th><td><code>iat</code> within 120 s; <code>jti</code> of 8 to 128 characters, accepted once</td></tr>
          <tr><th scope="row">Access or step-up request</th><td>the owner has 300 s</td></tr>
          <tr><th scope="row">Step-up token</th><td>60 s, one use, for the exact action text</td></tr>
          <tr><th scope="row">Scopes</th><td>1 to 20, each of <code>[a-z0-9_:.-]</code>, at most 64 characters</td></tr>
          <tr><th scope="row">Rate limits</th><td>20 access requests per site per 5 minutes, 10 step-ups per minute, 60 token calls per site per minute; a <code>429</code> carries <code>Retry-After</code></td></tr>
        </tbody>
      </table>
    </div>

    <h2 id="rules">Good manners</h2>
    <ul>
      <li>Keep the private key on the agent's machine, readable by it alone; only the public key goes to Mandate.</li>
      <li>Sign a new DPoP proof for every request, retries included.</li>
      <li>Store the newest refresh token at once; let one process per agent and site refresh.</li>
      <li>On <code>403 agent revoked by its owner</code> or a denied request, stop: do not ask again in a loop.</li>
      <li>Use the site's exact step-up wording: the owner reads it, the site checks it.</li>
    </ul>
    <p>Errors come as <code>{"detail": "…", "next_step": "…"}</code>; <code>next_step</code> says what to do. All
    conventions: <a href="${api}">API reference</a>; the machine-readable
    description: <a href="/openapi.json">/openapi.json</a>.</p>`;
}
