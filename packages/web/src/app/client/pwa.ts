// Installable app: the service worker (offline start of the app shell; it never caches /api) and
// an "Install" button where the browser offers installation.
import { byId } from './dom.ts';

interface InstallPromptEvent extends Event {
  prompt(): Promise<void>;
}

const isInstallPrompt = (e: Event): e is InstallPromptEvent => typeof (e as Partial<InstallPromptEvent>).prompt === 'function';

export function setUpPwa(): void {
  if ('serviceWorker' in navigator) {
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
