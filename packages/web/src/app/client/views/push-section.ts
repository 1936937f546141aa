// "Notifications on this device" on the Account view: whether this browser gets requests as
// notifications (on, off, blocked by the browser and how to fix that, or not supported), turning
// them on and off, and a test notification to every device of the owner.
import { api } from '../api.ts';
import { run } from '../actions.ts';
import { byId } from '../dom.ts';
import { plural } from '../format.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import { BLOCKED_HELP, type PushState, pushState, turnOff, turnOn } from '../push.ts';
import type { Device, PushTestResult } from '../types.ts';

const STATES: Record<PushState, { text: string; help: string }> = {
  on: { text: 'On: new requests show as notifications here.', help: 'Approving still needs your passkey; a notification only brings you to the request.' },
  off: { text: 'Off: this device is not told when an agent asks.', help: 'Turn them on to see new requests at once, even when Mandate is closed.' },
  blocked: { text: 'Blocked by the browser.', help: BLOCKED_HELP },
  unsupported: {
    text: 'Not supported on this browser.',
    help: 'On an iPhone or iPad, add Mandate to the Home Screen (Share, then "Add to Home Screen") and open it from there. Elsewhere, use a current Chrome, Edge, Firefox or Safari.',
  },
};

let lastDevices: Device[] = [];

/** Shows this browser's state; called whenever the device list was loaded. */
export async function showPushState(devices: Device[]): Promise<void> {
  lastDevices = devices;
  // A browser that refuses to say (service workers off in a strict privacy mode) cannot get pushes.
  const state = await pushState(devices).catch((): PushState => 'unsupported');
  const card = byId('push-card', HTMLElement);
  card.dataset.state = state;
  byId('push-state', HTMLElement).textContent = STATES[state].text;
  byId('push-help', HTMLElement).textContent = STATES[state].help;
  byId('push-on', HTMLButtonElement).hidden = state !== 'off';
  byId('push-off', HTMLButtonElement).hidden = state !== 'on';
}

/** "Sent to 2 devices", failures, or how to add a device when there is none. */
export function testResultText(r: PushTestResult): string {
  if (r.sent === 0 && r.failed === 0) {
    return 'No device gets notifications yet. Turn them on above on this device, or on your phone: open Mandate there, sign in, and tap "Turn on notifications".';
  }
  const sent = `Sent to ${plural(r.sent, 'device')}.`;
  if (!r.failed) return `${sent} It should show in a few seconds.`;
  return `${sent} ${plural(r.failed, 'device')} could not be reached; remove ${r.failed === 1 ? 'it' : 'them'} below if ${r.failed === 1 ? 'it is' : 'they are'} no longer used.`;
}

export function setUpPushSection(): void {
  const on = byId('push-on', HTMLButtonElement);
  const off = byId('push-off', HTMLButtonElement);
  const test = byId('push-test', HTMLButtonElement);
  const result = byId('push-test-result', HTMLElement);
  const error = byId('push-error', HTMLElement);
  on.addEventListener('click', () => void run(on, 'Turning on…', async () => {
    try {
      await turnOn();
      show('Notifications are on for this device.', 'ok');
    } finally {
      await reload('devices');
    }
  }, { errorNode: error }));
  off.addEventListener('click', () => void run(off, 'Turning off…', async () => {
    await turnOff();
    await reload('devices');
    show('Notifications are off for this device.', 'ok');
  }, { errorNode: error }));
  test.addEventListener('click', () => void run(test, 'Sending…', async () => {
    result.hidden = true;
    const r = await api<PushTestResult>('POST', '/api/push/test');
    result.textContent = testResultText(r);
    result.className = r.sent ? 'notice ok' : 'notice';
    result.hidden = false;
  }, { errorNode: error }));
}

export function resetPushSection(): void {
  lastDevices = [];
  byId('push-test-result', HTMLElement).hidden = true;
  byId('push-error', HTMLElement).hidden = true;
}

/** The devices last shown, for the offer card (is this browser on already?). */
export const knownDevices = (): Device[] => lastDevices;
