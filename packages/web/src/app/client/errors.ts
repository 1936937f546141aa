// Any error as a sentence for people: API errors carry their own; WebAuthn errors are named here.
import { ApiError } from './api.ts';

const WEBAUTHN_ERRORS: Record<string, string> = {
  NotAllowedError: 'The passkey prompt was cancelled or timed out. Try again, and confirm with your fingerprint, face or screen lock.',
  InvalidStateError: 'This device already holds a passkey for this account. Use it, or add a passkey on another device.',
  SecurityError: 'Passkeys need this page to be opened at the service\'s own address (https, or localhost).',
  NotSupportedError: 'This device cannot make a passkey of the kind Mandate needs. Try another device or browser.',
  AbortError: 'The passkey prompt was closed. Try again.',
};

/** The browser's name for an error (NotAllowedError, ...): SimpleWebAuthn wraps them in a WebAuthnError with the original as `cause`. */
export function errorName(e: unknown): string {
  if (!(e instanceof Error)) return '';
  const cause = (e as { cause?: unknown }).cause;
  return cause instanceof Error ? cause.name : e.name;
}

export function errorText(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error) return WEBAUTHN_ERRORS[errorName(e)] ?? WEBAUTHN_ERRORS[e.name] ?? e.message;
  return String(e);
}

/** A 403 that says a passkey sign-in is needed (it carries `next_step`; cross-site refusals do not). */
export const needsPasskeySession = (e: unknown): boolean => e instanceof ApiError && e.status === 403 && Boolean(e.nextStep);
