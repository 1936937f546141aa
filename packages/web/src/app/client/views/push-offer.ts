// Right after the owner's first passkey: a card offering to get requests on this device as
// notifications. This is the moment it makes sense (the owner just set up this device to approve);
// the browser's permission prompt opens only when they tap the card's button.
import { run } from '../actions.ts';
import { button, el } from '../dom.ts';
import { reload } from '../loaders.ts';
import { show } from '../message.ts';
import { pushState, pushSupported, turnOn } from '../push.ts';
import { knownDevices } from './push-section.ts';

const OFFER_ID = 'push-offer';

/** Shows the offer after `anchor` (the passkey form or notice just used), unless it cannot help here. */
export async function offerPush(anchor: HTMLElement): Promise<void> {
  // Only an offer: if the state cannot be read, the Account view still has the switch.
  const state = pushSupported() ? await pushState(knownDevices()).catch(() => 'unsupported' as const) : 'unsupported';
  if (state !== 'off') return;
  removePushOffer();
  const accept = button('Turn on notifications', '', { id: 'push-offer-button' });
  const later = button('Not now', 'link', { id: 'push-offer-later' });
  const error = el('p', { className: 'card-error', role: 'alert', hidden: true });
  const card = el('div', { id: OFFER_ID, className: 'notice push-offer', role: 'region', 'aria-labelledby': 'push-offer-title' },
    el('p', {}, el('strong', { id: 'push-offer-title', text: 'Get requests on this device' })),
    el('p', { text: 'Turn on notifications and this device shows each new request from your agents at once, even when Mandate is closed. You then approve here with your passkey.' }),
    error,
    el('div', { className: 'row' }, accept, later));
  accept.addEventListener('click', () => void run(accept, 'Turning on…', async () => {
    await turnOn();
    removePushOffer();
    show('Notifications are on: new requests show on this device.', 'ok');
    await reload('devices');
  }, { errorNode: error, also: [later] }));
  later.addEventListener('click', () => {
    removePushOffer();
    show('You can turn notifications on later in Account.', 'info');
  });
  anchor.after(card);
  card.scrollIntoView({ block: 'nearest' });
}

export function removePushOffer(): void {
  document.getElementById(OFFER_ID)?.remove();
}
