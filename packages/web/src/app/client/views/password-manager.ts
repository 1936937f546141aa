// The password-manager switch on an agent's card (decisions §17), only for an agent whose browser
// runs on its operator's computers: off until the owner turns it on, since a secret filled there
// passes through the operator's machines. Turning it on asks to confirm; off takes one tap.
import { api, seg } from '../api.ts';
import { confirmInline, run } from '../actions.ts';
import { button, el } from '../dom.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import type { Agent } from '../types.ts';

const STATE_TEXT = {
  off: 'Off: it cannot use your passwords on its operator\'s computers; it asks you to take over to sign in.',
  on: 'On: it may list, fill and save your passwords in its operator\'s browser.',
} as const;

/** The `dt`/`dd` pair for the card's facts, or nothing for an agent the switch does not concern. */
export function passwordManagerFacts(a: Agent, errorNode: HTMLElement): HTMLElement[] {
  if (a.password_manager === 'not_applicable') return [];
  const on = a.password_manager === 'on';
  const toggle = on
    ? button('Turn off', 'secondary password-manager-off', { 'aria-label': `Turn the password manager off for ${a.name}` })
    : button('Turn on', 'secondary password-manager-on', { 'aria-label': `Turn the password manager on for ${a.name}` });
  const row = el('div', { className: 'row actions' }, toggle);
  toggle.addEventListener('click', async () => {
    if (!on && !(await confirmInline(row, `Let ${a.name} use your passwords? Its browser runs on its operator's computers, so the passwords it fills pass through them.`, 'Turn on'))) return;
    await run(toggle, on ? 'Turning off…' : 'Turning on…', async () => {
      await api('POST', `/api/agents/${seg(a.id)}/password-manager`, { enabled: !on });
      show(on ? `${a.name} can no longer use your passwords.` : `${a.name} may now use your passwords.`, 'ok');
      await reload('agents', 'activity');
    }, { errorNode });
  });
  return [
    el('dt', { text: 'Password manager' }),
    el('dd', { className: `password-manager ${a.password_manager}` }, el('span', { className: 'password-manager-state', text: STATE_TEXT[a.password_manager] }), row),
  ];
}
