/**
 * OIDC scopes on Mandate's grants (decisions §18). `openid` and `profile` are plain grant scopes;
 * `email` and `phone` release the owner's verified email address and verified phone number, so each
 * also needs the user-info field of the same meaning on the grant (`user:email`, `user:phone`): the
 * owner approves them like any user-info field, and can narrow them later. An unverified address is
 * never released (decisions §25): while the owner's email is unverified the `email` scope is not
 * requestable, and a sign-in that holds it gets `email_verified: false` and no `email` claim.
 */
import type { GrantRecord, UserRecord } from '../../store/ports/index.ts';
import { availableUserInfoFields } from '../user-info.ts';
import { SUPPORTED_SCOPES } from './deps.ts';

const FIELD_OF_SCOPE: Readonly<Record<string, string>> = { email: 'user:email', phone: 'user:phone' };

/**
 * The scopes of a request this provider can act on, in order, without repeats: the known ones, and
 * `email`/`phone` only when the owner has a value to release (a phone only once verified).
 */
export function requestableScopes(raw: string, owner: UserRecord | undefined): string[] {
  const available = new Set(owner ? availableUserInfoFields(owner).map((f) => f.name) : []);
  const known = [...new Set(raw.split(' ').filter((s) => (SUPPORTED_SCOPES as readonly string[]).includes(s)))];
  return known.filter((s) => FIELD_OF_SCOPE[s] === undefined || available.has(FIELD_OF_SCOPE[s]));
}

/** The user-info fields the owner is asked to approve for these scopes. */
const userInfoOfScopes = (scopes: readonly string[]): string[] => scopes.flatMap((s) => (FIELD_OF_SCOPE[s] ? [FIELD_OF_SCOPE[s]] : []));

/** Of `scopes`, those the grant allows now (for `email`/`phone`: the scope and its field). */
export function allowedScopes(scopes: readonly string[], grant: Pick<GrantRecord, 'scopes' | 'userInfo'>): string[] {
  return scopes.filter((s) => grant.scopes.includes(s) && (FIELD_OF_SCOPE[s] === undefined || grant.userInfo.includes(FIELD_OF_SCOPE[s])));
}

export interface ScopeClaims {
  email?: string;
  /** With the `email` scope: true with `email`, false (and no `email`) while the address is unverified. */
  email_verified?: boolean;
  phone_number?: string;
  phone_number_verified?: true;
}

/** The standard claims released by `scopes` (already allowed), read from the owner's record now. */
export function scopeClaims(scopes: readonly string[], owner: UserRecord): ScopeClaims {
  const out: ScopeClaims = {};
  if (scopes.includes('email')) {
    if (owner.emailVerified) out.email = owner.email;
    out.email_verified = owner.emailVerified;
  }
  if (scopes.includes('phone') && owner.phoneVerified && owner.phone) {
    out.phone_number = owner.phone;
    out.phone_number_verified = true;
  }
  return out;
}

/**
 * What an access request filed for a sign-in asks the owner: the sign-in's scopes and fields plus
 * those of the agent's live grant at the site. Approving a request replaces that grant, so asking
 * only for the sign-in's scopes would silently narrow access the owner gave before.
 */
export function askedWithGrant(scopes: readonly string[], grant: Pick<GrantRecord, 'scopes' | 'userInfo'> | undefined): { scopes: string[]; userInfo: string[] } {
  const userInfo = userInfoOfScopes(scopes);
  if (!grant) return { scopes: [...scopes], userInfo };
  return { scopes: [...new Set([...grant.scopes, ...scopes])], userInfo: [...new Set([...grant.userInfo, ...userInfo])] };
}
