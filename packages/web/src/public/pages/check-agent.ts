import type { SiteContext } from '../context.ts';
import { html } from '../html.ts';
import { layout } from '../layout.ts';

/** What the page shows: the values typed (kept in the forms) and, after a check, its answer or a refusal. */
export interface CheckAgentView {
  /** The address looked up (GET ?agent=), or empty. */
  agent: string;
  /** The pasted request (POST), or empty. */
  request: string;
  result?: { outcome: string; agent: string | null; ours: boolean; keys: string[]; detail: string };
  /** A refusal (bad input, too many checks) in a sentence. */
  error?: string;
}

/** The outcomes in plain words, in the order the API describes them. */
const OUTCOMES: [string, string][] = [
  ['verified', 'The request carries a web-bot-auth signature over its host and its Signature-Agent, still valid, made with a key the agent\'s directory lists.'],
  ['invalid', 'The request is signed, but the signature is malformed, expired, leaves out the host or Signature-Agent, or does not match the directory\'s key.'],
  ['unverified', 'The request is signed, but its key could not be looked up: no Signature-Agent, the directory could not be fetched, or it does not list the key.'],
  ['unsigned', 'The request has no Signature-Input and Signature headers.'],
  ['found', 'For an address: the directory was read; its keys are listed.'],
];

const EXAMPLE = 'GET /products HTTP/1.1\nHost: shop.example\nSignature-Agent: "https://…"\nSignature-Input: sig1=("@authority" "signature-agent");created=…\nSignature: sig1=:…:';

/**
 * /tools/check-agent, the HTML twin of POST /api/v1/check-agent (decisions §22): look up an agent's
 * key directory by address (GET), or paste a request to check its Web Bot Auth signature (POST).
 * No script: plain forms, so the pages' strict CSP holds.
 */
export function checkAgentPage(ctx: SiteContext, view: CheckAgentView): string {
  const r = view.result;
  const main = html`
<div class="wrap narrow block tool">
  <h1>Check an agent</h1>
  <p class="lead">Agents that use Web Bot Auth sign their requests and publish their public keys in a key directory at
  their address (the <code>Signature-Agent</code> header). Paste a request to see whether its signature holds, or enter an
  agent's address to see the keys it publishes.</p>
  ${view.error ? html`<p class="tool-error" role="alert">${view.error}</p>` : ''}
  ${r ? html`<section class="tool-result" aria-labelledby="result" role="status">
    <h2 id="result">Result: <span class="outcome outcome-${r.outcome}">${r.outcome}</span></h2>
    <p>${r.detail}</p>
    <dl>
      <dt>Agent address</dt><dd>${r.agent ? html`<code>${r.agent}</code>${r.ours ? ' (an agent of this service)' : ''}` : 'none'}</dd>
      <dt>Keys in its directory</dt><dd>${r.keys.length ? html`<ul>${r.keys.map((k) => html`<li><code>${k}</code></li>`)}</ul>` : 'none'}</dd>
    </dl>
  </section>` : ''}
  <form class="tool-form" method="post" action="/tools/check-agent">
    <h2>Check a signed request</h2>
    <label for="request">The request line and headers, as the site received them (at most 16 kB)</label>
    <textarea id="request" name="request" rows="9" maxlength="16384" required spellcheck="false" placeholder="${EXAMPLE}">${view.request}</textarea>
    <p class="actions"><button class="button" type="submit">Check the request</button></p>
  </form>
  <form class="tool-form" method="get" action="/tools/check-agent">
    <h2>Look up an agent's keys</h2>
    <label for="agent">The agent's address (its Signature-Agent)</label>
    <input id="agent" name="agent" type="url" maxlength="2048" required value="${view.agent}" placeholder="https://agent.example" spellcheck="false">
    <p class="actions"><button class="button" type="submit">Look up</button></p>
  </form>
  <h2>What the results mean</h2>
  <dl class="tool-outcomes">
    ${OUTCOMES.map(([k, v]) => html`<dt><code>${k}</code></dt><dd>${v}</dd>`)}
  </dl>
  <p>Directories of other services are fetched over https only, from public addresses, without following redirects,
  within 5 seconds and 64 kB. At most 30 checks per 10 minutes from one address. The same check is an API:
  <code>POST /api/v1/check-agent</code>.</p>
</div>`;
  return layout(ctx, { path: '/tools/check-agent', title: 'Check an agent', description: 'Check a Web Bot Auth signature on a request, or list the keys an agent publishes.' }, main);
}
