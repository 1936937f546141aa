// The page-wide message line: good news fades, errors stay until the next action.
import { byId } from './dom.ts';

let timer: ReturnType<typeof setTimeout> | undefined;

export function show(text: string, kind: 'ok' | 'error' | 'info' = 'info'): void {
  const node = byId('message', HTMLElement);
  node.textContent = text;
  node.className = kind;
  node.hidden = !text;
  clearTimeout(timer);
  if (text && kind !== 'error') timer = setTimeout(() => (node.hidden = true), 12_000);
  if (text) node.scrollIntoView({ block: 'nearest' });
}

export const clearMessage = (): void => show('');
