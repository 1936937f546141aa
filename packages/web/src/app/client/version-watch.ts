// Reloads the open app when the server serves a new version of it (GET /api/page-version, a hash
// of the app's assets): otherwise a phone that keeps the app open for days runs old code against a
// new server. It reloads only at a safe moment: never while a passkey ceremony is under way (the
// reload would cancel it) and never while a field holds something typed and not yet sent. Until
// then the new version waits, and each later check tries again.
import { api } from './api.ts';
import { ceremonyUnderWay } from './webauthn.ts';

/** Looked at most this often from the app's poll; at once when the app comes back into view. */
const CHECK_EVERY_MS = 60_000;

let lastCheck = 0;
let newer = false;

/** The version this page runs: the `v` of its own script's address (/assets/app/app.js?v=...). */
export function ownVersion(doc: Document = document): string | null {
  const src = doc.querySelector<HTMLScriptElement>('script[src*="/assets/app/app.js"]')?.src;
  return src ? new URL(src, doc.baseURI).searchParams.get('v') : null;
}

type Field = HTMLInputElement | HTMLTextAreaElement;

/** Text fields the person typed into since their form was last sent. */
const edited = new Set<Field>();

const isTextField = (el: EventTarget | null): el is Field =>
  el instanceof HTMLTextAreaElement || (el instanceof HTMLInputElement && !['checkbox', 'radio', 'hidden', 'submit', 'button', 'file', 'range', 'color'].includes(el.type));

/** Watches typing: `input` events come from the person, never from the app setting a value. */
export function watchTyping(doc: Document = document): void {
  doc.addEventListener('input', (e) => {
    if (isTextField(e.target)) edited.add(e.target);
  }, true);
  doc.addEventListener('submit', (e) => {
    for (const field of [...edited]) if (e.target instanceof HTMLFormElement && e.target.contains(field)) edited.delete(field);
  }, true);
}

/**
 * Whether a field holds something the person typed and has not sent: typed into, not since sent with
 * its form, and not emptied or reset by the app (as it does after saving). Fields of another view
 * count (typed, then switched tabs); those of the half of the app not in use do not (the sign-in
 * form keeps what was typed into it after signing in). Toggles and menus save as they change.
 */
export function hasUnsavedInput(): boolean {
  for (const field of [...edited]) {
    if (!field.isConnected || field.value === '' || field.value === field.defaultValue || field.closest('#signed-out[hidden], #signed-in[hidden]') !== null) {
      edited.delete(field);
      continue;
    }
    return true;
  }
  return false;
}

const safeNow = (): boolean => !ceremonyUnderWay() && !hasUnsavedInput();

/** Called from the app's poll and on visibility changes; `now` forces a check (the app came into view). */
export async function checkVersion(now = false): Promise<void> {
  const mine = ownVersion();
  if (mine === null) return;
  if (!newer && (now || Date.now() - lastCheck >= CHECK_EVERY_MS)) {
    lastCheck = Date.now();
    try {
      const { version } = await api<{ version: string }>('GET', '/api/page-version');
      newer = version !== mine;
    } catch {
      return; // offline or a server restarting: the next check tries again
    }
  }
  if (newer && safeNow()) location.reload();
}
