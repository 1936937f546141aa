// Adding an agent: paste the public key it made (JWK or PEM), or follow the mandate-agent command
// line steps, which make the key on the agent's machine and print it.
import { api, userError } from '../api.ts';
import { run } from '../actions.ts';
import { byId, el } from '../dom.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import { copyButton } from './agent-card.ts';

/** Shell quoting for the commands we print: names may hold spaces or quotes. */
const shellQuote = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'"'"'`)}'`);

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

/** The signed-in owner's email, for the one-step command. */
let sessionEmail = '';

function renderCliSteps(name: string): void {
  const origin = location.origin;
  const agentName = shellQuote(name.trim() || 'my-agent');
  const init = `npx mandate-agent init --service ${origin} --name ${agentName}`;
  const direct = `npx mandate-agent init --service ${origin} --name ${agentName} --email ${shellQuote(sessionEmail || 'you@example.com')}`;
  const steps = byId('agent-cli-steps', HTMLElement);
  const command = (text: string, what: string) => el('div', { className: 'command' }, el('code', { text }), copyButton(text, what));
  steps.replaceChildren(
    el('li', {}, 'On the machine where the agent runs, make its key:', command(init, 'the init command'),
      el('span', { className: 'hint', text: 'The private key stays there (in ~/.mandate-agent, readable only by you). The command prints the public key.' })),
    el('li', {}, 'Paste that public key above under "Paste its public key", with the same name, and press "Add agent".'),
    el('li', {}, 'Tell the agent its id (shown once it is added):', command('npx mandate-agent set-id ag_…', 'the set-id command')),
    el('li', {}, 'Or, in one step, let the command register the agent with your account. It asks for your password (or reads MANDATE_PASSWORD); never put a password on the command line:',
      command(direct, 'the one-step command')),
  );
}

export function setAgentFormEmail(email: string): void {
  sessionEmail = email;
  renderCliSteps(byId('agent-name', HTMLInputElement).value);
}

function showCreated(agent: { id: string; name: string }): void {
  const setId = `npx mandate-agent set-id ${agent.id}`;
  const box = byId('agent-created', HTMLElement);
  box.replaceChildren(
    el('p', {}, el('strong', { text: `${agent.name} is added.` }), ' Its id is ', el('span', { className: 'code', text: agent.id }), ' ', copyButton(agent.id, 'the agent id')),
    el('p', { className: 'hint', text: 'If you made its key with the command line, tell the agent its id:' }),
    el('div', { className: 'command' }, el('code', { text: setId }), copyButton(setId, 'the set-id command')),
    el('p', { className: 'hint', text: 'When it asks for access to a site, the request appears under Requests.' }),
  );
  box.hidden = false;
}

export function setUpAgentForm(): void {
  const form = byId('agent-form', HTMLFormElement);
  const name = byId('agent-name', HTMLInputElement);
  const key = byId('agent-key', HTMLTextAreaElement);
  const submit = byId('agent-create-button', HTMLButtonElement);
  name.addEventListener('input', () => renderCliSteps(name.value));
  renderCliSteps('');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void run(submit, 'Adding…', async () => {
      const body = { name: name.value.trim(), ...keyBody(key.value) };
      if (!body.name) throw userError('Give the agent a name you will recognise, like "shopping assistant".');
      const agent = await api<{ id: string; name: string }>('POST', '/api/agents', body);
      form.reset();
      renderCliSteps('');
      showCreated(agent);
      show(`Agent "${agent.name}" added (${agent.id}).`, 'ok');
      await reload('agents', 'activity');
    });
  });
}

export function resetAgentForm(): void {
  byId('agent-form', HTMLFormElement).reset();
  byId('agent-created', HTMLElement).hidden = true;
  sessionEmail = '';
}
