// The passkey ceremonies, through @simplewebauthn/browser (bundled into this script). Each one also
// tells device.ts what it learnt: a passkey sign-in made this session, a passkey answered from this
// device's own authenticator.
import {
  WebAuthnAbortService,
  browserSupportsWebAuthn,
  browserSupportsWebAuthnAutofill,
  platformAuthenticatorIsAvailable,
  startAuthentication,
  startRegistration,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/browser';
import { api, seg, userError } from './api.ts';
import { type DeviceFacts, hasPasskeyHere, notePasskeyHere, rememberSignIn } from './device.ts';
import { hooks, session } from './session.ts';

const NO_WEBAUTHN = 'This browser cannot use passkeys. Open Mandate in a current browser on your phone or computer.';

type RequestOptions = { challenge: string; options: PublicKeyCredentialRequestOptionsJSON };

function needWebAuthn(): void {
  if (!browserSupportsWebAuthn()) throw userError(NO_WEBAUTHN);
}

/** A passkey that answered (or was made) on this device itself, rather than on a phone the browser reached. */
const fromThisDevice = (credential: { authenticatorAttachment?: string | null }): boolean => credential.authenticatorAttachment !== 'cross-platform';

let platform: boolean | null = null;

/** Looks once whether the device has a user-verifying authenticator of its own (fingerprint, face, screen lock). */
export async function checkPlatformAuthenticator(): Promise<void> {
  if (platform !== null) return;
  platform = browserSupportsWebAuthn() ? await platformAuthenticatorIsAvailable().catch(() => false) : false;
  hooks.passkeysChanged();
}

/** What device.ts's `approvePlace` decides from. */
export function deviceFacts(): DeviceFacts {
  return {
    passkeys: session.passkeys,
    webauthn: browserSupportsWebAuthn(),
    passkeyHere: hasPasskeyHere(session.userId),
    method: session.method,
    platform,
  };
}

async function finishSignIn(challenge: string, assertion: AuthenticationResponseJSON): Promise<void> {
  const { user } = await api<{ user: { id: string } }>('POST', '/api/webauthn/login/verify', { challenge, assertion });
  rememberSignIn('passkey');
  session.method = 'passkey';
  if (fromThisDevice(assertion)) notePasskeyHere(user.id);
  hooks.passkeysChanged();
}

/**
 * Signs in with a passkey (a new session cookie). Without `email` the browser offers every passkey
 * it holds for Mandate, and the one chosen names the account; with it, only that account's passkey
 * may sign in (the server checks).
 */
export function passkeySignIn(email?: string): Promise<void> {
  return during(() => passkeySignInNow(email));
}

async function passkeySignInNow(email?: string): Promise<void> {
  needWebAuthn();
  const query = email ? `?email=${encodeURIComponent(email)}` : '';
  const { challenge, options } = await api<RequestOptions>('GET', `/api/webauthn/login/options${query}`);
  await finishSignIn(challenge, await startAuthentication({ optionsJSON: options }));
}

let ceremonies = 0;

/** Whether a passkey sign-in, registration or approval is under way: the app does not reload itself then (version-watch.ts). */
export const ceremonyUnderWay = (): boolean => ceremonies > 0;

async function during<T>(work: () => Promise<T>): Promise<T> {
  ceremonies++;
  try {
    return await work();
  } finally {
    ceremonies--;
  }
}

let autofillWanted = false;

const aborted = (e: unknown): boolean => {
  const err = e as { name?: unknown; code?: unknown; cause?: { name?: unknown } } | null;
  return err?.name === 'AbortError' || err?.code === 'ERROR_CEREMONY_ABORTED' || err?.cause?.name === 'AbortError';
};

/**
 * Offers the passkeys this browser holds for Mandate in the email field's suggestions (WebAuthn
 * conditional mediation), where the browser supports it. Resolves true once signed in; false when
 * the browser cannot, or the offer was withdrawn (another ceremony started, or `stopPasskeyAutofill`).
 */
export async function passkeyAutofill(): Promise<boolean> {
  autofillWanted = true;
  if (!browserSupportsWebAuthn() || !(await browserSupportsWebAuthnAutofill().catch(() => false))) return false;
  const { challenge, options } = await api<RequestOptions>('GET', '/api/webauthn/login/options');
  if (!autofillWanted) return false;
  let assertion: AuthenticationResponseJSON;
  try {
    assertion = await startAuthentication({ optionsJSON: options, useBrowserAutofill: true });
  } catch (e) {
    if (aborted(e)) return false;
    autofillWanted = false;
    throw e;
  }
  autofillWanted = false;
  await finishSignIn(challenge, assertion);
  return true;
}

/** Withdraws the autofill offer (the person signed in another way). Other ceremonies are left alone. */
export function stopPasskeyAutofill(): void {
  if (!autofillWanted) return;
  autofillWanted = false;
  WebAuthnAbortService.cancelCeremony();
}

/** Registers a passkey on this device for the signed-in owner. */
export function registerPasskey(name: string): Promise<void> {
  return during(() => registerPasskeyNow(name));
}

async function registerPasskeyNow(name: string): Promise<void> {
  needWebAuthn();
  const { challenge, options } = await api<{ challenge: string; options: PublicKeyCredentialCreationOptionsJSON }>('GET', '/api/webauthn/register/options');
  const attestation = await startRegistration({ optionsJSON: options });
  await api('POST', '/api/webauthn/register/verify', { challenge, attestation, ...(name ? { name } : {}) });
  if (fromThisDevice(attestation)) notePasskeyHere(session.userId);
  hooks.passkeysChanged();
}

/** A passkey assertion over one request's challenge, to approve it. `onPrompt` runs when the prompt opens. */
export function approvalAssertion(txnId: string, onPrompt: () => void): Promise<unknown> {
  return during(() => approvalAssertionNow(txnId, onPrompt));
}

async function approvalAssertionNow(txnId: string, onPrompt: () => void): Promise<unknown> {
  needWebAuthn();
  const { options } = await api<{ options: PublicKeyCredentialRequestOptionsJSON }>('GET', `/api/txn/${seg(txnId)}/assertion-options`);
  onPrompt();
  const assertion = await startAuthentication({ optionsJSON: options });
  if (fromThisDevice(assertion) && !hasPasskeyHere(session.userId)) {
    notePasskeyHere(session.userId);
    hooks.passkeysChanged();
  }
  return assertion;
}
