// The passkey ceremonies, through @simplewebauthn/browser (bundled into this script).
import {
  browserSupportsWebAuthn,
  startAuthentication,
  startRegistration,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/browser';
import { api, seg, userError } from './api.ts';

const NO_WEBAUTHN = 'This browser cannot use passkeys. Open Mandate in a current browser on your phone or computer.';

function needWebAuthn(): void {
  if (!browserSupportsWebAuthn()) throw userError(NO_WEBAUTHN);
}

/** Signs in with a passkey (a new session cookie); `email` only scopes the throttle. */
export async function passkeySignIn(email: string): Promise<void> {
  needWebAuthn();
  const { challenge, options } = await api<{ challenge: string; options: PublicKeyCredentialRequestOptionsJSON }>(
    'GET', `/api/webauthn/login/options?email=${encodeURIComponent(email)}`,
  );
  const assertion = await startAuthentication({ optionsJSON: options });
  await api('POST', '/api/webauthn/login/verify', { challenge, assertion });
}

/** Registers a passkey on this device for the signed-in owner. */
export async function registerPasskey(name: string): Promise<void> {
  needWebAuthn();
  const { challenge, options } = await api<{ challenge: string; options: PublicKeyCredentialCreationOptionsJSON }>('GET', '/api/webauthn/register/options');
  const attestation = await startRegistration({ optionsJSON: options });
  await api('POST', '/api/webauthn/register/verify', { challenge, attestation, ...(name ? { name } : {}) });
}

/** A passkey assertion over one request's challenge, to approve it. `onPrompt` runs when the prompt opens. */
export async function approvalAssertion(txnId: string, onPrompt: () => void): Promise<unknown> {
  needWebAuthn();
  const { options } = await api<{ options: PublicKeyCredentialRequestOptionsJSON }>('GET', `/api/txn/${seg(txnId)}/assertion-options`);
  onPrompt();
  return startAuthentication({ optionsJSON: options });
}
