import { createHash } from 'node:crypto';
import type { ResourcePassClaims } from '@mandate/protocol';

/**
 * What a step-up token filed with an app's resource pass is bound to (its `cnf`, decisions §28): the
 * pass's DPoP key when the pass is bound to one, else (a bearer pass: the app holds no key) a value
 * derived from the OAuth client, shaped like a thumbprint but naming no key. Cloud verify computes the
 * same from the resource pass it is given, so a step-up approved for one client's calls cannot be
 * spent with another client's pass of the same app agent (which `sub`, `aud` and `user` already pin).
 */
export function resourceStepupBinding(pass: Pick<ResourcePassClaims, 'cnf' | 'client_id'>): string {
  if (pass.cnf !== undefined) return pass.cnf.jkt;
  return createHash('sha256').update(`mandate-bearer-client:${pass.client_id}`, 'utf8').digest('base64url');
}
