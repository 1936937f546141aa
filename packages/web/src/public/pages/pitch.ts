import { docHref, type SiteContext } from '../context.ts';
import { html } from '../html.ts';
import { layout } from '../layout.ts';

/**
 * /pitch (decisions §23): the case for sites and for owners, in plain words. Claims only what the
 * service does (no invented figures): each sentence here has a mechanism behind it in the docs.
 */
export function pitchPage(ctx: SiteContext): string {
  const main = html`
<section class="hero hero-small">
  <div class="wrap">
    <p class="eyebrow">Why Mandate</p>
    <h1>Agents that act for people, on terms those people approved</h1>
    <p class="lead">Software agents already book, buy and fill in forms for people. Today they mostly do it with the
    person's password or by imitating a browser, so a site cannot tell the person from the agent, and the person cannot
    limit what the agent does. Mandate puts a person's explicit, revocable approval between the two.</p>
    <p class="actions"><a class="button" href="/challenge">Try it with an agent</a> <a class="button secondary" href="/check">Check your site</a></p>
  </div>
</section>

<div class="wrap block">
  <div class="two-col">
    <section aria-labelledby="owners">
      <h2 id="owners">For people who use agents</h2>
      <ul class="rules">
        <li><strong>Your password stays yours.</strong> An agent gets a pass for one site, with the scopes you ticked, for
        ten minutes at a time; it never needs your sign-in.</li>
        <li><strong>You approve with a passkey.</strong> Each access and each sensitive action is a card in the app,
        approved with your fingerprint, face or PIN, so a stolen password approves nothing.</li>
        <li><strong>Sensitive actions one by one.</strong> A payment or a deletion needs a step-up: your approval of that
        exact action, usable once, for 60 seconds.</li>
        <li><strong>Stop it at any time.</strong> Revoke a site or block an agent and sites that verify with Mandate refuse
        it from the next request.</li>
        <li><strong>A record you can read.</strong> Every request, approval and use is in your activity list.</li>
      </ul>
    </section>
    <section aria-labelledby="sites">
      <h2 id="sites">For sites</h2>
      <ul class="rules">
        <li><strong>Know who is calling.</strong> Every agent request names the agent and a stable id of the person it
        acts for, with the permissions that person granted.</li>
        <li><strong>Your scopes, your rules.</strong> You define the scopes and which actions need a step-up; people see
        them exactly as you wrote them.</li>
        <li><strong>Proof for what matters.</strong> A step-up is cryptographic proof that the person approved that one
        action, not just that an agent asked.</li>
        <li><strong>Little to build.</strong> One verification call per request (cloud mode), or local checks against
        published keys; SDKs for Node.js, a WordPress plugin, and OpenID Connect sign-in for agents.</li>
        <li><strong>Nothing locked in.</strong> The service is open software you can run yourself; the protocol is built on
        published standards (OAuth DPoP, WebAuthn, OpenID Connect).</li>
      </ul>
    </section>
  </div>
</div>

<section class="band" aria-labelledby="honest">
  <div class="wrap block">
    <h2 id="honest">What it does not do</h2>
    <ul class="rules">
      <li>It does not make an agent behave well. It makes sure a person agreed to what the agent may try, lets sites tell
      agents apart, and lets sites report agents that misbehave.</li>
      <li>It does not replace your sign-in for people; it sits beside it, for agents.</li>
      <li>An agent that never asks Mandate is not stopped by it; a site that wants only approved agents refuses requests
      without a valid pass.</li>
    </ul>
    <p class="more"><a href="/how-it-works">How it works, step by step</a> · <a href="/for-shops">How a site integrates</a> · <a href="${docHref(ctx, 'sites', 'readiness')}">Setting up a site</a></p>
  </div>
</section>`;
  return layout(ctx, {
    path: '/pitch',
    title: 'Why Mandate: the case for sites and owners',
    description: 'Why people and sites use Mandate: agents act with a pass instead of a password, people approve with a passkey, sensitive actions need a one-time step-up, and sites know who is calling.',
    nav: 'pitch',
  }, main);
}
