import { type AgentSource, agentCommand, agentPairCommand } from '@mandate/protocol/agent-command';
import { docHref, type SiteContext } from '../context.ts';
import { html } from '../html.ts';
import { layout } from '../layout.ts';

/**
 * The challenge (decisions §23): a protected route this instance serves itself, so that anyone can
 * try an agent end to end without a site of their own. Its site id is the instance's host (with
 * :port when not the default), as an agent derives it from the URL; the scope is `challenge`; the
 * step-up action is `claim`.
 */
export const CHALLENGE_SCOPE = 'challenge';
export const CHALLENGE_ACTION = 'claim';

/** The challenge's site id: the host of BASE_URL, as `new URL()` gives it (no default port). */
export const challengeSite = (baseUrl: string): string => new URL(baseUrl).host;

interface Step {
  title: string;
  text: string;
  command: string;
  answer: string;
}

/** The steps, the same for people (/challenge) and agents (/challenge/agents.txt). */
function steps(baseUrl: string, agentPackage: string | null): Step[] {
  const tool: AgentSource = { baseUrl, agentPackage };
  const site = challengeSite(baseUrl);
  return [
    {
      title: 'Pair the agent with its owner',
      text: `The owner signs in at ${baseUrl}/app, opens Agents, presses "Add agent" and gives the agent the one-time code. The agent makes its key and pairs (Node.js 20 or later; nothing else to install).`,
      command: agentPairCommand(tool, 'CODE'),
      answer: 'paired: the agent id is saved with the key',
    },
    {
      title: 'Ask for access to the challenge',
      text: `The site id is ${site}, the scope ${CHALLENGE_SCOPE}. The owner gets a card in the app and approves it with a passkey.`,
      command: agentCommand(tool, ['request', '--site', site, '--scopes', CHALLENGE_SCOPE, '--wait']),
      answer: `approved: scopes ${CHALLENGE_SCOPE}`,
    },
    {
      title: 'Read the challenge with the pass',
      text: 'The tool sends the pass with a fresh DPoP proof; this instance verifies it as any site does.',
      command: agentCommand(tool, ['call', `${baseUrl}/challenge`]),
      answer: `200 {"ok": true, "site": "${site}", ...}`,
    },
    {
      title: 'Claim: a sensitive action',
      text: `The route answers 403 {"error": "stepup_required", "action": "${CHALLENGE_ACTION}"}; the tool asks the owner to approve "${CHALLENGE_ACTION}" (a passkey again) and sends the request once more with the one-time step-up token.`,
      command: agentCommand(tool, ['call', '-X', 'POST', `${baseUrl}/challenge/claim`]),
      answer: '200 {"claimed": true, ...}',
    },
  ];
}

function sdkExample(baseUrl: string): string {
  const site = challengeSite(baseUrl);
  return `import { MandateAgent } from '@mandate/agent';

const agent = MandateAgent.fromDirectory(); // the key and id the pairing saved
await agent.requestAccessAndWait({ site: '${site}', scopes: ['${CHALLENGE_SCOPE}'] });
const read = await agent.fetch('${baseUrl}/challenge');
console.log(read.status, await read.json());
// 403 stepup_required first: fetch asks the owner to approve "${CHALLENGE_ACTION}" and retries once.
const claim = await agent.fetch('${baseUrl}/challenge/claim', { method: 'POST' });
console.log(claim.status, await claim.json());`;
}

export function challengePage(ctx: SiteContext, agentPackage: string | null): string {
  const site = challengeSite(ctx.baseUrl);
  const main = html`
<section class="hero hero-small">
  <div class="wrap">
    <p class="eyebrow">Try it</p>
    <h1>The challenge: an agent, end to end</h1>
    <p class="lead">This page is also a protected route. An agent with a pass for <code>${site}</code> and the scope
    <code>${CHALLENGE_SCOPE}</code> can read it, and claim it once its owner approves the action
    <code>${CHALLENGE_ACTION}</code> with a passkey. It is verified exactly as any site verifies agents, so it shows the
    whole flow without a site of your own.</p>
    <p class="actions"><a class="button" href="/app">Open the app</a> <a class="button secondary" href="/challenge/agents.txt">The steps for agents</a></p>
  </div>
</section>

<div class="wrap block">
  <h2 id="steps">Four steps</h2>
  <ol class="timeline">
    ${steps(ctx.baseUrl, agentPackage).map((s) => html`<li>
      <h3>${s.title}</h3>
      <p>${s.text}</p>
      <pre><code>${s.command}</code></pre>
      <p class="more">Expect: <code>${s.answer}</code></p>
    </li>`)}
  </ol>
</div>

<section class="band" aria-labelledby="sdk">
  <div class="wrap block">
    <h2 id="sdk">The same with the agent SDK</h2>
    <pre><code>${sdkExample(ctx.baseUrl)}</code></pre>
    <p>What the route answers: <code>401</code> with <code>{"error": …}</code> when the pass or proof does not verify,
    <code>403 insufficient_scope</code> without the scope, <code>403 stepup_required</code> on a claim without a step-up.
    <a href="${docHref(ctx, 'sites', 'challenge')}">More in the docs</a>.</p>
  </div>
</section>`;
  return layout(ctx, {
    path: '/challenge',
    title: 'The challenge: try an agent end to end',
    description: `A protected route of this Mandate instance: an agent reads it with a pass for ${site} (scope ${CHALLENGE_SCOPE}) and claims it with a one-time step-up its owner approves.`,
    nav: 'challenge',
  }, main);
}

/** /challenge/agents.txt: the same steps as plain text for an agent to follow. */
export function challengeAgentsTxt(baseUrl: string, agentPackage: string | null): string {
  const site = challengeSite(baseUrl);
  const lines = [
    `# The Mandate challenge at ${baseUrl}`,
    '',
    `A protected route for trying an agent end to end. Site id: ${site}. Scope: ${CHALLENGE_SCOPE}. Step-up action: ${CHALLENGE_ACTION}.`,
    `- GET ${baseUrl}/challenge with Authorization: Bearer <pass> and DPoP: <proof> -> 200 JSON.`,
    `- POST ${baseUrl}/challenge/claim with the pass, a proof and X-Service-Stepup: <step-up token for "${CHALLENGE_ACTION}"> -> 200 JSON; without the step-up: 403 {"error":"stepup_required","action":"${CHALLENGE_ACTION}"}.`,
    '- A pass or proof that does not verify: 401 {"error": <code>, "error_description": ...}; a pass without the scope: 403 {"error":"insufficient_scope"}.',
    '',
  ];
  steps(baseUrl, agentPackage).forEach((s, i) => {
    lines.push(`## ${i + 1}. ${s.title}`, '', s.text, '', `    ${s.command}`, '', `Expect: ${s.answer}`, '');
  });
  lines.push('## The same with the agent SDK (@mandate/agent)', '', ...sdkExample(baseUrl).split('\n').map((l) => (l ? `    ${l}` : '')), '');
  return lines.join('\n');
}
