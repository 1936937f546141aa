import { docHref, hasDoc, type SiteContext } from '../context.ts';
import { html } from '../html.ts';
import { layout } from '../layout.ts';

export function homePage(ctx: SiteContext): string {
  const sdks = hasDoc(ctx, 'agents', 'sdk') || hasDoc(ctx, 'sites', 'sdk');
  const main = html`
<section class="hero">
  <div class="wrap">
    <p class="eyebrow">Authorization for AI agents</p>
    <h1>Your agents act for you. You decide what they may do.</h1>
    <p class="lead">Mandate is an authorization service for software agents: it lets them use websites on a person's
    behalf without ever holding that person's password. The person approves, with a passkey, exactly what each agent may do at each site. The agent receives a short-lived
    pass bound to its own key, and the site checks every request.</p>
    <p class="actions">
      <a class="button" href="/app">Create your account</a>
      <a class="button secondary" href="/how-it-works">See how it works</a>
    </p>
  </div>
</section>

<section class="wrap block" aria-labelledby="why">
  <h2 id="why">What changes when agents carry a mandate</h2>
  <ul class="facts">
    <li><h3>No shared passwords</h3><p>Each agent has its own P-256 key pair. Only the public key reaches Mandate; the private key never leaves the agent.</p></li>
    <li><h3>Approved with a passkey</h3><p>Every access and every sensitive action is approved with the owner's passkey, after fingerprint, face or PIN. A stolen password approves nothing.</p></li>
    <li><h3>Narrow and short-lived</h3><p>Scopes the site defines, personal details only when approved, optional expiry and use limits. Passes last 10 minutes and are bound to the agent's key (DPoP, RFC 9449).</p></li>
    <li><h3>Revocable at once</h3><p>Revoke one grant or block an agent everywhere. Sites that verify with Mandate refuse it immediately; sites that verify locally, as soon as they fetch the next signed revocation list (about every minute).</p></li>
  </ul>
</section>

<section class="band" aria-labelledby="who">
  <div class="wrap block">
    <h2 id="who">One service, four kinds of users</h2>
    <div class="cards">
      <article class="card">
        <h3>Owners</h3>
        <p>Create agents, see their requests as cards in the Mandate app on your phone or computer, approve with your passkey
        or deny with one tap. Narrow the scopes and personal details asked for, limit how long and how often, revoke at any
        time, and read the full activity trail.</p>
        <p><a href="/app">Open the app</a></p>
      </article>
      <article class="card">
        <h3>Agent developers</h3>
        <p>Your agent makes a key pair, asks its owner for access to a site, gets a pass, and signs a fresh DPoP proof for
        each request. Sensitive actions get a one-time step-up approval. Agents can check their own status and send the
        owner a note.</p>
        <p><a href="/docs/agents">Docs for agent developers</a></p>
      </article>
      <article class="card">
        <h3>Sites and shops</h3>
        <p>Know which agent is calling, for which person, with which permissions, and that the person approved each
        sensitive action. Verify with one call to Mandate, or locally against its published keys and signed revocation list.</p>
        <p><a href="/for-shops">Mandate for sites</a></p>
      </article>
      <article class="card">
        <h3>Self-hosters</h3>
        <p>One command starts Mandate on an embedded SQLite database. For more traffic, run any number of service nodes over
        one PostgreSQL database: single-use tokens and rate limits hold across all of them.</p>
        <p><a href="${docHref(ctx, 'operations', 'self-hosting')}">Self-hosting guide</a></p>
      </article>
    </div>
  </div>
</section>

<section class="wrap block" aria-labelledby="flow">
  <h2 id="flow">A request, end to end</h2>
  <ol class="steps">
    <li><strong>The agent asks.</strong> It names the site, the scopes it needs (such as <code>orders:read</code>) and, if it must, personal details such as your email.</li>
    <li><strong>You approve with your passkey.</strong> The card shows the agent, the site and every scope as written. You may narrow them and set an expiry or a number of uses.</li>
    <li><strong>The agent gets a pass.</strong> A signed token for that one site, valid 10 minutes, renewable with a single-use refresh token, useless without the agent's private key.</li>
    <li><strong>The site verifies each request.</strong> Pass plus a one-time proof of the agent's key for that exact method and URL. Sensitive actions also need your one-time step-up.</li>
    <li><strong>You stay in control.</strong> Revoke a grant or block the agent, and its passes stop working.</li>
  </ol>
  <p><a class="button secondary" href="/how-it-works">The whole flow in detail</a></p>
</section>

<section class="band" aria-labelledby="status">
  <div class="wrap block">
    <h2 id="status">Where Mandate stands (version 0.1.0)</h2>
    <div class="two-col">
      <div>
        <h3>Works today</h3>
        <ul>
          <li>Accounts with password or passkey sign-in; passkeys required for every approval</li>
          <li>Agents with their own keys; access requests, approvals with narrowing and limits, denials</li>
          <li>DPoP-bound passes with single-use refresh tokens</li>
          <li>Cloud and local verification; one-time step-ups for sensitive actions</li>
          <li>Revocation of grants and agents, with a signed revocation list for local verifiers</li>
          <li>Agent reputation from site reports, agent status, notes to the owner, the activity trail</li>
          <li>Requests pushed to the owner's phone and browsers (web push; Android through FCM), a notification inbox, quiet hours</li>
          ${sdks ? html`<li>SDKs for agents and for sites</li>` : ''}
          <li>Sign-in for sites with OpenID Connect (and CIBA), with back-channel logout</li>
          <li>Account recovery with a verified phone and recovery codes; password reset by a mailed link</li>
          <li>Sign-in and approval with a linked identity provider (Google, Microsoft or any OpenID Connect issuer)</li>
          <li>Data export and account deletion from the app</li>
          <li>SQLite for one machine, PostgreSQL for many nodes</li>
        </ul>
      </div>
      <div>
        <h3>Planned</h3>
        <ul>
          <li>Operator accounts that run agents for many people</li>
          <li>Pre-approved plans for scheduled tasks, and take-overs of sites without Mandate</li>
          <li>Web Bot Auth keys, site tools and a WordPress plugin</li>
          <li>MCP for agents and for MCP servers</li>
        </ul>
      </div>
    </div>
  </div>
</section>`;
  return layout(ctx, {
    path: '/',
    title: 'Mandate: approve what your AI agents may do',
    description: 'Mandate is an authorization service for AI agents: people approve with a passkey what each agent may do at each site; agents carry short-lived, key-bound passes; sites verify every request.',
  }, main);
}
