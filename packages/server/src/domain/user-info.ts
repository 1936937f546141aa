import type { UserRecord } from '../store/ports/index.ts';
import { badRequest } from './errors.ts';

/**
 * The registry of user-info fields an agent may ask for and a site may receive once the owner
 * approves them (interface.md "User-info fields"). `user:phone` exists only for an owner whose phone
 * is verified, and `user:email` only for an owner whose email is verified (decisions §25: anyone can
 * sign up with someone else's address, and a site that links accounts by email would take it as
 * that person): asking for either otherwise is the same 400 as asking for a field that does not
 * exist, because there is nothing the owner could approve. A grant that holds the field releases
 * nothing for it while the address is unverified (after a change of address, say).
 */
export interface UserInfoField {
  name: string;
  description: string;
  /** The value disclosed to a site; undefined when the owner has none to give. */
  value(user: UserRecord): string | undefined;
}

export const USER_INFO_FIELDS: readonly UserInfoField[] = [
  { name: 'user:name', description: "the owner's display name", value: (u) => u.displayName },
  { name: 'user:email', description: "the owner's verified email address (offered only once the owner verified it)", value: (u) => (u.emailVerified ? u.email : undefined) },
  { name: 'user:phone', description: "the owner's verified phone number (offered only once the owner verified one)", value: (u) => (u.phoneVerified && u.phone ? u.phone : undefined) },
];

const BY_NAME = new Map(USER_INFO_FIELDS.map((f) => [f.name, f]));

/** Is `name` a field of the registry (whether or not a given owner can approve it)? */
export const isKnownUserInfoField = (name: string): boolean => BY_NAME.has(name);

/** The 400 for a field name outside what may be asked for or kept; the name is quoted, cut to 80 characters. */
export const unknownUserInfoField = (name: string, extra?: Record<string, unknown>) =>
  badRequest(`unknown user_info field: ${JSON.stringify(name.slice(0, 80))}`, extra);

/** The fields this owner can approve: every field that has a value for them. */
export function availableUserInfoFields(user: UserRecord): UserInfoField[] {
  return USER_INFO_FIELDS.filter((f) => f.value(user) !== undefined);
}

/**
 * Checks requested field names against what this owner can approve; duplicates collapse, order is
 * kept. Throws 400 `unknown user_info field: NAME` for anything else.
 */
export function checkUserInfoNames(names: readonly string[], user: UserRecord): string[] {
  const available = new Set(availableUserInfoFields(user).map((f) => f.name));
  const out: string[] = [];
  for (const name of names) {
    if (!available.has(name)) {
      throw unknownUserInfoField(name, {
        next_step: `ask only for fields listed by GET /api/user-info/fields (${[...available].join(', ')})`,
      });
    }
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

/**
 * The values of approved fields for a pass or a verify answer, read at mint time so a narrowed
 * grant, an unverified phone or an unverified email stops disclosure with the next pass. Fields
 * without a value are left out.
 */
export function resolveUserInfo(user: UserRecord, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = BY_NAME.get(name)?.value(user);
    if (value !== undefined) out[name] = value;
  }
  return out;
}
