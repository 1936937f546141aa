import { docHref, type SiteContext } from '../context.ts';
import { html } from '../html.ts';
import { layout } from '../layout.ts';

export function howItWorksPage(ctx: SiteContext): string {
  const main = html`
<section class="hero hero-small">
  <div class="wrap">
    <p class="eyebrow">How it works</p>
    <h1>From "may I?" to a verified request</h1>
    <p class="lead">Three parties take part: the <strong>owner</strong> (a person with a Mandate account), the
    owner's <strong>agents</strong> (software acting for them), and <strong>sites</strong> that agents use. Mandate sits
    between them: it records what the owner approved and signs passes that say so.</p>
  </div>
</section>

<div class="wrap block">
  <ol class="timeline">
    <li id="owner">
      <h2>1. The owner signs up and adds a passkey</h2>
      <p>The owner creates an account in the <a href="/app">Mandate app</a> and registers a passkey: a key pair made by
      their phone or computer, unlocked with fingerprint, face or PIN. Mandate keeps only the public key. From then on
      every approval is a signature by that passkey over that one request, so a leaked password is not enough to approve
      anything, or to add another passkey.</p>
      <p class="more"><a href="${docHref(ctx, 'reference', 'passkeys')}">How passkeys are checked</a></p>
    </li>
    <li id="agent-key">
      <h2>2. The agent gets its own key</h2>
      <p>Each agent generates an EC P-256 key pair and keeps the private key to itself. The owner registers the public
      key (as a JWK or a PEM) and the agent receives its id, <code>ag_…</code>. The agent proves itself to Mandate with
      short <em>agent JWTs</em> signed by that key (at most 15 minutes of life). No password of the owner is ever involved.</p>
    </li>
    <li id="request">
      <h2>3. The agent asks for access to a site</h2>
      <p>A site is named by its host name, such as <code>shop.example</code>. The request lists the scopes the agent needs,
      short names the site defines such as <code>list</code> or <code>orders:read</code>, and optionally personal details:
      <code>user:name</code>, <code>user:email</code>. The owner has five minutes to answer.</p>
    </li>
    <li id="approval">
      <h2>4. The owner approves with a passkey</h2>
      <p>The request appears as a card in the app: the agent's name, the site, every scope as written, the details asked
      for. The owner can untick scopes or details, set an expiry or a maximum number of uses, and approve with the
      passkey, or deny with one tap. The first answer from any of the owner's devices counts; the others drop the card.</p>
    </li>
    <li id="pass">
      <h2>5. The agent receives a DPoP-bound pass</h2>
      <p>The pass is a token signed by Mandate (ES256) for that one site. It names the agent, the person (a stable user
      id), the approved scopes and details, and the thumbprint of the agent's key. It is valid for 10 minutes, or less
      if the grant ends sooner. With it comes a single-use refresh token: each renewal returns a new one and voids the
      old one.</p>
    </li>
    <li id="call">
      <h2>6. The agent calls the site</h2>
      <p>Each request carries the pass (<code>Authorization: Bearer …</code>) and a fresh <em>DPoP proof</em>
      (<code>DPoP: …</code>, RFC 9449): a small token signed with the agent's private key, for this method and this exact
      URL, with the current time, a one-time id and a hash of the pass. A stolen pass is useless without the key, and a
      captured proof is worth one request.</p>
    </li>
    <li id="verify">
      <h2>7. The site verifies every request</h2>
      <div class="two-col">
        <div class="panel">
          <h3>Cloud mode</h3>
          <p>The site sends the pass, the proof, the method and the URL to Mandate's <code>POST /api/v1/verify</code> and
          gets a verdict: the agent, its name, the person, the scopes, the approved details. Revocation takes effect at
          once. If Mandate cannot be reached, the site refuses the request.</p>
        </div>
        <div class="panel">
          <h3>Local mode</h3>
          <p>The site checks the signatures itself against Mandate's published keys (<code>/api/v1/jwks</code>) and a
          signed revocation list it fetches about every 60 seconds. No call per request; if its list grows too old
          (5 minutes by default) it refuses requests until it has a fresh one.</p>
        </div>
      </div>
    </li>
    <li id="stepup">
      <h2>8. Sensitive actions need a step-up</h2>
      <p>Paying, deleting, sending: the site answers <code>403 {"error": "stepup_required"}</code>. The agent asks its
      owner to approve that exact action, for example <code>pay order 42</code>, and the owner approves it with the
      passkey. The agent receives a step-up token that is valid for 60 seconds and for one use, and sends it with the
      retried request. Even in local mode, the site confirms each step-up with Mandate, so it can be used only once.</p>
    </li>
    <li id="revocation">
      <h2>9. Revocation</h2>
      <p>The owner can revoke one grant (this agent at this site) or block or remove an agent everywhere. No new pass,
      refresh or step-up is issued from then on, cloud verification refuses existing passes at once, and the entry
      appears in the signed revocation list that local verifiers poll. Sites can also report an agent's behaviour, which
      moves its public reputation score (0 to 100).</p>
    </li>
  </ol>
</div>

<section class="band" aria-labelledby="who-sees">
  <div class="wrap block">
    <h2 id="who-sees">Who learns what</h2>
    <div class="table-wrap">
      <table>
        <thead><tr><th scope="col">Party</th><th scope="col">Learns</th><th scope="col">Never gets</th></tr></thead>
        <tbody>
          <tr><th scope="row">Mandate</th><td>The owner's email and password hash, passkey public keys, agents' public keys, requests, grants, the activity trail</td><td>Private keys of passkeys or agents, the site's own data</td></tr>
          <tr><th scope="row">The agent</th><td>Its own passes and step-up tokens, the approved scopes</td><td>The owner's password or passkey</td></tr>
          <tr><th scope="row">A site</th><td>The agent's id and name, the person's stable user id, the approved scopes, and only the personal details the owner approved</td><td>Anything the owner did not approve, the owner's other agents and sites</td></tr>
        </tbody>
      </table>
    </div>
    <p class="actions">
      <a class="button" href="/docs/agents">Build an agent</a>
      <a class="button secondary" href="/for-shops">Accept agents on your site</a>
    </p>
  </div>
</section>`;
  return layout(ctx, {
    path: '/how-it-works',
    title: 'How it works',
    description: 'How Mandate works: passkey approvals by the owner, a key per agent, DPoP-bound passes, cloud or local verification by sites, one-time step-ups for sensitive actions, and revocation.',
    nav: 'how',
  }, main);
}
