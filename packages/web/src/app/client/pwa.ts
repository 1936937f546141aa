// Installable app: the service worker (offline start of the app shell; it never caches /api), an
// "Install" button where the browser offers installation, and the worker's "open this" messages
// after a tap on a notification.
import type { OpenMessage } from '../worker/scope.ts';
import { byId } from './dom.ts';
import { showCurrentView } from './router.ts';

interface InstallPromptEvent extends Event {
  prompt(): Promise<void>;
}

const isInstallPrompt = (e: Event): e is InstallPromptEvent => typeof (e as Partial<InstallPromptEvent>).prompt === 'function';

const isOpenMessage = (data: unknown): data is OpenMessage =>
  typeof data === 'object' && data !== null && (data as Partial<OpenMessage>).type === 'open' && typeof (data as Partial<OpenMessage>).url === 'string';

/**
 * A tapped notification while the app is open: the worker focuses this window and names the URL.
 * A view of the app changes in place (what is on screen stays); only same-origin app URLs are followed.
 */
function listenToWorker(): void {
  navigator.serviceWorker.addEventListener('message', (e: MessageEvent<unknown>) => {
    if (!isOpenMessage(e.data)) return;
    let url: URL;
    try {
      url = new URL(e.data.url, location.origin);
    } catch {
      return;
    }
    if (url.origin !== location.origin) return;
    if (url.pathname === location.pathname) {
      if (url.hash === location.hash) showCurrentView(true);
      else location.hash = url.hash;
    } else if (url.pathname.startsWith('/app/')) {
      location.assign(url.href);
    }
  });
  navigator.serviceWorker.startMessages();
}

export function setUpPwa(): void {
  if ('serviceWorker' in navigator) {
    listenToWorker();
    // Scope /app: the worker serves the app's shell only, never the public pages or the API.
    navigator.serviceWorker.register('/sw.js', { scope: '/app' }).catch((e: unknown) => {
      console.warn('Mandate works without offline start here:', e);
    });
  }
  const install = byId('install-button', HTMLButtonElement);
  let offer: InstallPromptEvent | null = null;
  window.addEventListener('beforeinstallprompt', (e) => {
    if (!isInstallPrompt(e)) return;
    e.preventDefault();
    offer = e;
    install.hidden = false;
  });
  install.addEventListener('click', async () => {
    install.hidden = true;
    await offer?.prompt();
    offer = null;
  });
  window.addEventListener('appinstalled', () => (install.hidden = true));
}
