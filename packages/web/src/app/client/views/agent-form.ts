// Adding an agent. "Add agent" with the key field empty makes a one-time pairing code that the
// agent's machine redeems (`mandate-agent pair CODE`): no key to copy, no password on that machine.
// Pasting a public key the agent made (JWK or PEM) is the other way; the command line steps below
// the form lead with the code too. Every command runs the tool from this service
// (`npx --yes --package=<BASE_URL>/download/agent mandate-agent …`, decisions §26), or from the
// registry package the operator named: it works on a machine with only Node and npm.
import { type AgentSource, agentCommand, agentPairCommand, agentProgram } from '@mandate/protocol/agent-command';
import { api, userError } from '../api.ts';
import { run } from '../actions.ts';
import { byId, el } from '../dom.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import type { Agent } from '../types.ts';
import { copyButton } from './agent-card.ts';
import { onAgentsLoaded } from './agents.ts';

/** How often the app looks for the paired agent while a code is on screen. */
const PAIRING_POLL_MS = 3000;

/** The request body for a pasted key; a private key is refused here, so it never leaves the device. */
export function keyBody(raw: string): { jwk: Record<string, unknown> } | { pubkey: string } {
  const key = raw.trim();
  if (!key) throw userError('Paste the agent\'s public key (JWK or PEM). No key yet? Follow the command line steps below.');
  if (key.startsWith('{')) {
    let jwk: unknown;
    try {
      jwk = JSON.parse(key);
    } catch {
      throw userError('The key looks like JSON but is not complete. Paste the whole JWK, from { to }.');
    }
    if (!jwk || typeof jwk !== 'object' || Array.isArray(jwk)) throw userError('A JWK is a JSON object like {"kty":"EC","crv":"P-256","x":"…","y":"…"}.');
    if ('d' in jwk) throw userError('This is a private key (it has "d"). Paste only the public key: kty, crv, x and y. Keep the private key on the agent\'s machine.');
    return { jwk: jwk as Record<string, unknown> };
  }
  if (/PRIVATE KEY/.test(key)) throw userError('This is a private key. Paste only the public key (-----BEGIN PUBLIC KEY-----). Keep the private key on the agent\'s machine.');
  if (!key.includes('-----BEGIN PUBLIC KEY-----')) throw userError('This is not a public key. Paste a JWK ({"kty":"EC",…}) or a PEM (-----BEGIN PUBLIC KEY-----…).');
  return { pubkey: key };
}

/** Where the tool comes from, as the service said (GET /api/agent-tool). */
let told: AgentSource | undefined;
/**
 * Until the service has answered, its own download, which is right unless the operator set
 * AGENT_PACKAGE. (Read at use, not at load: node imports this module in the unit tests.)
 */
const tool = (): AgentSource => told ?? { baseUrl: location.origin, agentPackage: null };

/** What the command does and needs on the agent's machine, in one line under it. */
const toolHint = () => el('p', {
  className: 'hint',
  text: `This downloads the agent tool (mandate-agent) ${told?.agentPackage ? `from the npm registry (${told.agentPackage})` : 'from this Mandate service'} and runs it; it needs Node.js 20 or later.`,
});

const command = (text: string, what: string) => el('div', { className: 'command' }, el('code', { text }), copyButton(text, what));

/** The set-id command with the id still to fill in (`ag_…` is shown, not quoted). */
const setIdPlaceholder = () => `${agentProgram(tool())} set-id ag_…`;

async function loadTool(name: HTMLInputElement): Promise<void> {
  try {
    const answer = await api<{ base_url: string; agent_package: string | null }>('GET', '/api/agent-tool');
    told = { baseUrl: answer.base_url, agentPackage: answer.agent_package };
    renderCliSteps(name.value);
  } catch {
    // Offline: the steps keep this service's own download, right unless AGENT_PACKAGE is set.
  }
}

function renderCliSteps(name: string): void {
  const init = agentCommand(tool(), ['init', '--service', tool().baseUrl, '--name', name.trim() || 'my-agent']);
  byId('agent-cli-steps', HTMLElement).replaceChildren(
    el('li', {}, 'Give the agent a name above, leave the key empty and press "Add agent". The app shows a one-time code. On the machine where the agent runs, pair with it:',
      command(agentPairCommand(tool(), 'CODE'), 'the pair command'),
      toolHint(),
      el('span', { className: 'hint', text: 'This makes the agent\'s key there (the private key stays in ~/.mandate-agent, readable only by you) and registers it with your account. The agent never needs your password; never put a password on the command line.' })),
    el('li', {}, 'Or make the key first. On the agent\'s machine:', command(init, 'the init command'),
      'It prints the public key: paste it above under "Its public key" and press "Add agent". Then tell the agent the id the app shows:',
      command(setIdPlaceholder(), 'the set-id command')),
  );
}

/** Kept for main.ts: the steps no longer name the owner's email, but are redrawn on a new session. */
export function setAgentFormEmail(_email: string): void {
  renderCliSteps(byId('agent-name', HTMLInputElement).value);
}

/**
 * Scrolls `node` into the part of the screen nothing covers: below the sticky top bar, above the
 * tab bar that a phone keeps fixed at the bottom. (The browser's own scrollIntoView knows neither.)
 */
function bringIntoView(node: HTMLElement): void {
  const top = document.querySelector('.topbar')?.getBoundingClientRect().bottom ?? 0;
  const tabs = document.getElementById('tabs');
  const bottom = tabs && getComputedStyle(tabs).position === 'fixed' ? tabs.getBoundingClientRect().top : window.innerHeight;
  const rect = node.getBoundingClientRect();
  const gap = 8;
  if (rect.bottom > bottom - gap) window.scrollBy(0, Math.min(rect.bottom - bottom + gap, rect.top - top - gap));
  else if (rect.top < top + gap) window.scrollBy(0, rect.top - top - gap);
}

/**
 * The agent the result box is about ("… is added", "… is paired"), if any: the box goes once that
 * agent is revoked or deleted, rather than telling the owner for the rest of the session that it is ready.
 */
let boxAgent: string | undefined;

/** The result box under the form, brought into view: on a phone it starts below the fold. */
function showBox(...children: HTMLElement[]): void {
  boxAgent = undefined;
  const box = byId('agent-created', HTMLElement);
  box.replaceChildren(...children);
  box.hidden = false;
  bringIntoView(box);
}

function showCreated(agent: { id: string; name: string }): void {
  const setId = agentCommand(tool(), ['set-id', agent.id]);
  showBox(
    el('p', {}, el('strong', { text: `${agent.name} is added.` }), ' Its id is ', el('span', { className: 'code', text: agent.id }), ' ', copyButton(agent.id, 'the agent id')),
    el('p', { className: 'hint', text: 'If you made its key with the command line, tell the agent its id:' }),
    el('div', { className: 'command' }, el('code', { text: setId }), copyButton(setId, 'the set-id command')),
    el('p', { className: 'hint', text: 'When it asks for access to a site, the request appears under Requests.' }),
  );
  boxAgent = agent.id;
}

/** Hides the box about an agent that is no longer active (revoked, deleted, or gone from the list). */
function dropStaleBox(agents: Agent[]): void {
  if (!boxAgent) return;
  const agent = agents.find((a) => a.id === boxAgent);
  if (agent && agent.status === 'active' && agent.flag !== 'revoked') return;
  boxAgent = undefined;
  byId('agent-created', HTMLElement).hidden = true;
}

/** The code on screen: agents known before it was made, when it stops working, the poll timer. */
let waiting: { known: Set<string>; deadline: number; timer: ReturnType<typeof setInterval> } | undefined;

function stopWaiting(): void {
  if (waiting) clearInterval(waiting.timer);
  waiting = undefined;
}

/** A pairing code as POST /api/agents/pairing-codes answers it, with the command that redeems it. */
interface MadeCode {
  code: string;
  expires_in: number;
  name: string | null;
  /** Rendered by the service from BASE_URL and AGENT_PACKAGE: shown as it is. */
  command: string;
}

function showCode(made: MadeCode, known: Set<string>): void {
  const until = new Date(Date.now() + made.expires_in * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  showBox(
    el('p', {}, el('strong', { text: made.name ? `Pairing code for ${made.name}:` : 'Pairing code:' })),
    el('div', { className: 'command' }, el('code', { id: 'agent-pairing-code', text: made.code, style: 'font-size:1.5rem;letter-spacing:.08em' }), copyButton(made.code, 'the pairing code')),
    el('p', { className: 'hint', text: 'On the machine where the agent runs:' }),
    command(made.command, 'the pair command'),
    toolHint(),
    el('p', { className: 'hint', id: 'agent-pairing-status', text: `Works once, until ${until}. Waiting for the agent…` }),
  );
  stopWaiting();
  const timer = setInterval(() => {
    if (waiting && Date.now() > waiting.deadline) return expired();
    if (document.visibilityState === 'visible') void reload('agents').catch(() => undefined);
  }, PAIRING_POLL_MS);
  waiting = { known, deadline: Date.now() + made.expires_in * 1000, timer };
}

function expired(): void {
  stopWaiting();
  const status = document.getElementById('agent-pairing-status');
  if (status) status.textContent = 'This code has expired. Press "Add agent" with the key field empty for a new one.';
}

function paired(agent: Agent): void {
  stopWaiting();
  showBox(
    el('p', {}, el('strong', { text: `${agent.name} is paired.` }), ' Its id is ', el('span', { className: 'code', text: agent.id }), '; the agent has recorded it.'),
    el('p', { className: 'hint', text: 'When it asks for access to a site, the request appears under Requests.' }),
  );
  boxAgent = agent.id;
  // Called as the agent list is loaded, before its new card is drawn above the box: look again after.
  setTimeout(() => bringIntoView(byId('agent-created', HTMLElement)), 0);
  void reload('activity').catch(() => undefined);
}

/** A hint under the key field: leaving it empty is the way to pair. */
function addKeyHint(key: HTMLTextAreaElement): void {
  if (document.getElementById('agent-key-hint')) return;
  key.closest('label')?.after(el('p', { className: 'hint', id: 'agent-key-hint', text: 'No key? Leave it empty: "Add agent" then shows a one-time code to pair the agent from its machine.' }));
}

export function setUpAgentForm(): void {
  const form = byId('agent-form', HTMLFormElement);
  const name = byId('agent-name', HTMLInputElement);
  const key = byId('agent-key', HTMLTextAreaElement);
  const submit = byId('agent-create-button', HTMLButtonElement);
  addKeyHint(key);
  name.addEventListener('input', () => renderCliSteps(name.value));
  renderCliSteps('');
  void loadTool(name);
  onAgentsLoaded((agents) => {
    // An app approved meanwhile in a browser is not the agent being paired: it has no key.
    const added = waiting && agents.find((a) => a.kind !== 'app' && !waiting?.known.has(a.id));
    if (added) paired(added);
    else dropStaleBox(agents);
  });
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run(submit, 'Adding…', async () => {
      const agentName = name.value.trim();
      if (!agentName) throw userError('Give the agent a name you will recognise, like "shopping assistant".');
      if (!key.value.trim()) {
        // Agents known before the code exists: the one that appears after it is the paired one.
        const known = new Set((await api<Agent[]>('GET', '/api/agents')).map((a) => a.id));
        const made = await api<MadeCode>('POST', '/api/agents/pairing-codes', { name: agentName });
        form.reset();
        renderCliSteps('');
        showCode(made, known);
        return;
      }
      const agent = await api<{ id: string; name: string }>('POST', '/api/agents', { name: agentName, ...keyBody(key.value) });
      stopWaiting();
      form.reset();
      renderCliSteps('');
      showCreated(agent);
      await reload('agents', 'activity');
      show(`Agent "${agent.name}" added (${agent.id}).`, 'ok');
      bringIntoView(byId('agent-created', HTMLElement));
    });
  });
}

export function resetAgentForm(): void {
  stopWaiting();
  boxAgent = undefined;
  byId('agent-form', HTMLFormElement).reset();
  byId('agent-created', HTMLElement).hidden = true;
}
