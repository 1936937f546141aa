// Running what a button starts: the button is disabled and says what is happening; errors are
// reported where the person looks (the card they tapped, or the page message).
import { errorText, needsPasskeySession } from './errors.ts';
import { clearMessage, show } from './message.ts';
import { hooks, sessionEnded } from './session.ts';

/** Shows an error: a lost session signs out, a needed passkey sign-in is offered, the rest is text. */
export async function report(e: unknown, where?: HTMLElement): Promise<void> {
  if (await sessionEnded(e)) return;
  if (needsPasskeySession(e)) {
    hooks.passkeySessionNeeded();
    return;
  }
  if (where) {
    where.textContent = errorText(e);
    where.hidden = false;
  } else {
    show(errorText(e), 'error');
  }
}

export interface RunOptions {
  /** Where errors are shown (a card's error line); the page message otherwise. */
  errorNode?: HTMLElement;
  /** Other controls to disable while it runs. */
  also?: Iterable<HTMLButtonElement | HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>;
}

export async function run(button: HTMLButtonElement, runningLabel: string, work: () => Promise<void>, opts: RunOptions = {}): Promise<void> {
  const label = button.textContent ?? '';
  const controls = [button, ...(opts.also ?? [])];
  for (const c of controls) c.disabled = true;
  button.setAttribute('aria-busy', 'true');
  button.textContent = runningLabel;
  if (opts.errorNode) opts.errorNode.hidden = true;
  else clearMessage();
  try {
    await work();
  } catch (e) {
    await report(e, opts.errorNode);
  } finally {
    for (const c of controls) c.disabled = false;
    button.removeAttribute('aria-busy');
    button.textContent = label;
  }
}

/**
 * A confirm step inside the page (no blocking dialog): the row of buttons is replaced by the
 * question, a "yes" button and "Cancel". Resolves true when confirmed.
 */
export function confirmInline(row: HTMLElement, question: string, yesLabel: string): Promise<boolean> {
  const saved = [...row.childNodes];
  const doc = row.ownerDocument;
  const text = doc.createElement('p');
  text.className = 'confirm-question';
  text.textContent = question;
  const yes = doc.createElement('button');
  yes.type = 'button';
  yes.className = 'danger solid confirm-yes';
  yes.textContent = yesLabel;
  const no = doc.createElement('button');
  no.type = 'button';
  no.className = 'secondary confirm-no';
  no.textContent = 'Cancel';
  row.classList.add('confirming');
  row.replaceChildren(text, yes, no);
  yes.focus();
  return new Promise((resolve) => {
    const done = (answer: boolean) => {
      row.classList.remove('confirming');
      row.replaceChildren(...saved);
      resolve(answer);
    };
    yes.addEventListener('click', () => done(true), { once: true });
    no.addEventListener('click', () => done(false), { once: true });
  });
}
