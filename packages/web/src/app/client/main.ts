// The owner app: wiring of views, session and refreshing. Open requests and grants are polled
// (GET /api/me every few seconds while the app is visible, and at once when it comes back into
// view): that works the same with one service node or many over one database.
import { ApiError, api } from './api.ts';
import { report } from './actions.ts';
import { byId } from './dom.ts';
import { reload, registerLoader } from './loaders.ts';
import { show } from './message.ts';
import { setUpPwa } from './pwa.ts';
import { returnTarget } from './return-to.ts';
import { isShown, onShown, showCurrentView, startRouter } from './router.ts';
import { hooks, session } from './session.ts';
import type { Me } from './types.ts';
import { forgetSignIn, rememberSignIn, signInMethod } from './device.ts';
import { resetGrants, renderGrants, setGrantsHasAgents } from './views/access.ts';
import { askForPasskeySession, resetAccount, setUpAccount, showPasskeyManagement, showWhoami } from './views/account.ts';
import { loadActivity, resetActivity, setActivityHasAgents, setAgentChoices, setSiteSuggestions, setUpActivity } from './views/activity.ts';
import { resetAgentForm, setAgentFormEmail, setUpAgentForm } from './views/agent-form.ts';
import { loadAgents, onAgentsLoaded, resetAgents } from './views/agents.ts';
import { loadConnections, resetConnections, setUpConnections } from './views/connections.ts';
import { showUnread, unreadGeneration } from './views/bell.ts';
import { resetEmailAccount, setUpEmailAccount } from './views/email-account.ts';
import { resetAccountDelete, setUpAccountDelete } from './views/account-delete.ts';
import { resetEmailBanner, setUpEmailBanner } from './views/email-banner.ts';
import { resetEmailState, setEmailState } from './views/email-state.ts';
import { loadDevices } from './views/devices.ts';
import { loadInbox, markRequestRead, resetInbox, setUpInbox } from './views/notifications.ts';
import { loadNotifySettings } from './views/notify-settings.ts';
import { focusRequest, renderPending, resetRequests, setHasAgents, showPasskeyNotices, startRequestClock, stopRequestClock } from './views/requests.ts';
import { loadSites, resetSites, setUpSites } from './views/sites.ts';
import { loadPlans, resetPlans } from './views/plans.ts';
import { loadProviders, providerLabel, resetProviders } from './views/identity-providers.ts';
import { sayIdentityReturn, takeIdentityReturn } from './views/identity-return.ts';
import { offerPasskeyAutofill, setUpSignIn } from './views/sign-in.ts';
import { setUpForgotPassword } from './views/forgot-password.ts';
import { setUpDataExport } from './views/data-export.ts';
import { resetPhoneAccount, setUpPhoneAccount, showPhone } from './views/phone-account.ts';
import { resetRecoveryCodes, setUpRecoveryCodes } from './views/recovery-codes.ts';
import { resetRecover, setUpRecover } from './views/recover.ts';
import { loadTakeovers, resetTakeovers } from './views/takeovers.ts';
import { checkPlatformAuthenticator, stopPasskeyAutofill } from './webauthn.ts';
import { checkVersion, watchTyping } from './version-watch.ts';

const POLL_MS = 3000;
const RETRY_OFFLINE_MS = 5000;

let pollTimer: ReturnType<typeof setInterval> | undefined;
let loadingMe: Promise<void> | null = null;
let lastUnread: number | undefined;

/** GET /api/me: the owner, open requests, grants and the unread count. One call at a time. */
function loadMe(): Promise<void> {
  if (loadingMe) return loadingMe;
  let stale = false;
  loadingMe = (async () => {
    try {
      const fetchedAt = Date.now();
      const askedAt = unreadGeneration();
      const me = await api<Me>('GET', '/api/me');
      if (session.email !== me.email) setAgentFormEmail(me.email);
      session.email = me.email;
      session.userId = me.id;
      // Before the cards: a new card asking for the email is drawn knowing whether it is verified.
      setEmailState(me);
      if (me.session_method) rememberSignIn(me.session_method);
      const method = me.session_method ?? signInMethod();
      if (method !== session.method) {
        session.method = method;
        passkeysChanged();
      }
      showWhoami(me);
      showPhone({ phone: me.phone ?? null, phone_verified: me.phone_verified ?? false });
      renderPending(me.pending, fetchedAt);
      renderGrants(me.grants);
      setSiteSuggestions(me.grants.map((g) => g.site));
      // Counted before this app marked something read: asked again below rather than shown.
      stale = askedAt !== unreadGeneration();
      if (stale) return;
      showUnread(me.unread_notifications, askedAt);
      // Something new arrived while the inbox is on screen: show it. (Fewer unread is the owner
      // reading, here or elsewhere: the list on screen stays as it is.)
      const unread = me.unread_notifications ?? 0;
      if (lastUnread !== undefined && unread > lastUnread && isShown('notifications')) void reload('notifications').catch(() => undefined);
      lastUnread = unread;
    } finally {
      loadingMe = null;
    }
  })();
  return loadingMe.then(() => (stale ? loadMe() : undefined));
}

function setOnline(online: boolean): void {
  byId('offline', HTMLElement).hidden = online;
}

async function poll(): Promise<void> {
  if (document.visibilityState !== 'visible') return;
  // A new version of the app: reloaded at a safe moment (version-watch.ts), signed in or not.
  void checkVersion();
  if (!session.signedIn) return;
  try {
    await reload(...(isShown('activity') ? (['me', 'activity'] as const) : (['me'] as const)));
    setOnline(true);
  } catch (e) {
    if (e instanceof ApiError && e.status === 0) setOnline(false);
    else if (e instanceof ApiError && e.status === 401) await report(e);
    // Other failures (503 and the like) are retried at the next tick without noise.
  }
}

function setView(signedIn: boolean): void {
  session.signedIn = signedIn;
  byId('signed-in', HTMLElement).hidden = !signedIn;
  byId('tabs', HTMLElement).hidden = !signedIn;
  byId('bell', HTMLElement).hidden = !signedIn;
  byId('signed-out', HTMLElement).hidden = signedIn;
  document.body.classList.toggle('signed-in', signedIn);
}

function signedOut(reason?: string): void {
  if (pollTimer) clearInterval(pollTimer);
  pollTimer = undefined;
  stopRequestClock();
  setView(false);
  session.email = '';
  session.userId = '';
  session.method = null;
  forgetSignIn();
  resetRequests();
  resetGrants();
  resetAgents();
  resetConnections();
  resetAgentForm();
  resetActivity();
  resetAccount();
  resetEmailState();
  resetEmailBanner();
  resetEmailAccount();
  resetAccountDelete();
  resetInbox();
  resetSites();
  resetPlans();
  resetPhoneAccount();
  resetRecoveryCodes();
  resetRecover();
  resetProviders();
  resetTakeovers();
  lastUnread = undefined;
  document.title = 'Mandate';
  if (reason) show(reason, 'error');
}

/** After a sign-in (or on opening with a live session): load everything and start refreshing. */
async function enter(): Promise<void> {
  stopPasskeyAutofill();
  // Sent here to sign in by the consent page: back to it.
  const back = returnTarget(location.search);
  if (back !== null) return location.assign(back);
  await loadMe();
  setView(true);
  setOnline(true);
  await reload('devices', 'agents');
  void loadProviders();
  showCurrentView();
  startRequestClock();
  if (pollTimer) clearInterval(pollTimer);
  pollTimer = setInterval(() => void poll(), POLL_MS);
}

/** Opening the app: signed in already, signed out, or offline (then it tries again by itself). */
async function start(): Promise<void> {
  const showSignIn = (): void => {
    signedOut();
    // The email field offers this browser's passkeys when the app opens signed out. Not again
    // after a sign-out in this page (a reload offers them again): a pending offer is answered at
    // once by authenticators that simulate the person's touch, as the browser tests' do.
    offerPasskeyAutofill();
  };
  try {
    // Asked first: signed out, GET /api/me would answer 401, which the browser logs as an error.
    const { signed_in } = await api<{ signed_in: boolean }>('GET', '/api/session');
    if (!signed_in) return showSignIn();
    await enter();
  } catch (e) {
    // The session ended between the two questions.
    if (e instanceof ApiError && e.status === 401) return showSignIn();
    if (e instanceof ApiError && e.status === 0) {
      setOnline(false);
      setTimeout(() => void start(), RETRY_OFFLINE_MS);
      return;
    }
    signedOut();
    await report(e);
  }
}

async function signOut(): Promise<void> {
  await api('POST', '/api/logout');
  signedOut();
  show('Signed out.', 'ok');
}

/** What the app knows about passkeys here changed: the cards' advice and the Account view follow. */
function passkeysChanged(): void {
  showPasskeyNotices();
  showPasskeyManagement();
}

hooks.signedOut = signedOut;
hooks.passkeySessionNeeded = () => {
  location.hash = 'account';
  askForPasskeySession();
};
hooks.passkeysChanged = passkeysChanged;

registerLoader('me', loadMe);
registerLoader('agents', loadAgents);
registerLoader('devices', loadDevices);
// The take-over list sits in the Activity view and refreshes with it.
registerLoader('activity', async () => void (await Promise.all([loadActivity(), loadTakeovers()])));
registerLoader('notifications', loadInbox);
registerLoader('settings', loadNotifySettings);
registerLoader('sites', loadSites);
registerLoader('plans', loadPlans);
registerLoader('connections', loadConnections);
onAgentsLoaded(setAgentChoices);
onAgentsLoaded((agents) => {
  const has = agents.some((a) => a.status !== 'removed');
  setHasAgents(has);
  setGrantsHasAgents(has);
  setActivityHasAgents(has);
});

const quietly = (work: Promise<void>) => void work.catch((e: unknown) => report(e));
onShown('requests', (txn) => {
  quietly(reload('me'));
  if (txn) {
    focusRequest(txn);
    void markRequestRead(txn);
  }
});
onShown('access', () => quietly(reload('me')));
onShown('agents', () => quietly(reload('agents', 'plans', 'connections')));
onShown('activity', () => quietly(reload('activity')));
onShown('account', () => {
  quietly(reload('devices', 'settings'));
  void loadProviders();
});
onShown('notifications', () => quietly(reload('notifications')));
onShown('sites', () => quietly(reload('sites')));

// Back from an identity provider: the outcome is taken out of the address before the router reads it.
const identityReturn = takeIdentityReturn();
setUpSignIn(enter);
setUpForgotPassword();
setUpDataExport();
setUpAgentForm();
setUpConnections();
setUpActivity();
setUpAccount(signOut);
setUpEmailBanner();
setUpEmailAccount();
setUpAccountDelete();
setUpInbox();
setUpSites();
setUpPhoneAccount();
setUpRecoveryCodes();
setUpRecover(enter);
startRouter();
setUpPwa();
void checkPlatformAuthenticator();

watchTyping();
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') void checkVersion(true);
  void poll();
});
window.addEventListener('focus', () => void poll());
window.addEventListener('online', () => void (session.signedIn ? poll() : start()));

void start().then(async () => {
  await loadProviders();
  sayIdentityReturn(identityReturn, providerLabel);
});
