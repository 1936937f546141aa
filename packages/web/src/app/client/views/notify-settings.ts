// "Notification settings" on the Account view: requests (which cannot be turned off while agents
// exist: they wait for an answer, and the server refuses with a reason that is shown as it is),
// notes from agents, new agents and security notices, and quiet hours in this browser's time zone.
import { ApiError, api, userError } from '../api.ts';
import { run } from '../actions.ts';
import { byId } from '../dom.ts';
import type { NotifySettings } from '../types.ts';

const timeZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const DEFAULT_START = '22:00';
const DEFAULT_END = '07:00';

let loaded: NotifySettings | null = null;

const field = (id: string): HTMLInputElement => byId(id, HTMLInputElement);

function showQuietTimes(): void {
  byId('quiet-times', HTMLElement).hidden = !field('notify-quiet').checked;
}

function fill(s: NotifySettings): void {
  loaded = s;
  field('notify-approvals').checked = s.approvals;
  field('notify-notes').checked = s.notes;
  field('notify-session').checked = s.session_notices;
  field('notify-quiet').checked = s.quiet_hours !== null;
  field('quiet-start').value = s.quiet_hours?.start ?? DEFAULT_START;
  field('quiet-end').value = s.quiet_hours?.end ?? DEFAULT_END;
  const tz = s.quiet_hours?.tz ?? timeZone();
  byId('quiet-tz', HTMLElement).textContent = tz === timeZone() ? tz : `${tz} (saving sets ${timeZone()}, this device's time zone)`;
  showQuietTimes();
}

export async function loadNotifySettings(): Promise<void> {
  const card = byId('notify-settings-card', HTMLElement);
  try {
    fill(await api<NotifySettings>('GET', '/api/settings/notifications'));
    card.hidden = false;
  } catch (e) {
    // A service without these settings yet: the card stays out of the way rather than showing an error.
    if (e instanceof ApiError && e.status === 404) {
      card.hidden = true;
      return;
    }
    throw e;
  }
}

/** The form as the API's settings; quiet hours need both times. */
function readForm(): Partial<NotifySettings> {
  const quiet = field('notify-quiet').checked;
  const start = field('quiet-start').value;
  const end = field('quiet-end').value;
  if (quiet && (!/^\d\d:\d\d$/.test(start) || !/^\d\d:\d\d$/.test(end))) throw userError('Quiet hours need a start and an end time.');
  if (quiet && start === end) throw userError('Quiet hours need an end time other than the start time.');
  return {
    approvals: field('notify-approvals').checked,
    notes: field('notify-notes').checked,
    session_notices: field('notify-session').checked,
    quiet_hours: quiet ? { start, end, tz: timeZone() } : null,
  };
}

export function setUpNotifySettings(): void {
  const form = byId('notify-settings', HTMLFormElement);
  const save = byId('notify-save', HTMLButtonElement);
  const error = byId('notify-settings-error', HTMLElement);
  const status = byId('notify-settings-saved', HTMLElement);
  field('notify-quiet').addEventListener('change', showQuietTimes);
  form.addEventListener('input', () => (status.hidden = true));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    status.hidden = true;
    void run(save, 'Saving…', async () => {
      const wanted = readForm();
      try {
        fill(await api<NotifySettings>('POST', '/api/settings/notifications', wanted));
      } catch (e) {
        // Refused (requests cannot be turned off while agents exist): show what is really set.
        if (loaded && e instanceof ApiError && e.status === 400) fill(loaded);
        throw e;
      }
      status.hidden = false;
    }, { errorNode: error });
  });
}

export function resetNotifySettings(): void {
  loaded = null;
  byId('notify-settings-error', HTMLElement).hidden = true;
  byId('notify-settings-saved', HTMLElement).hidden = true;
}
