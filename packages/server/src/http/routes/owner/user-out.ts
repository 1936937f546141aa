import { Type } from '@sinclair/typebox';
import type { Accounts, SignedIn } from '../../../domain/accounts/accounts.ts';
import { maskPhone } from '../../../domain/accounts/accounts.ts';
import { iso } from '../../../clock.ts';
import type { UserRecord } from '../../../store/ports/index.ts';
import { Timestamp } from '../../schemas/common.ts';

/** The owner as the owner sees it: what /api/me and every sign-in answer carry. */
export const UserOut = Type.Object({
  id: Type.String(),
  email: Type.String(),
  display_name: Type.String(),
  phone: Type.Union([Type.String(), Type.Null()], { description: 'the verified phone, masked: country code and last four digits, e.g. `+1 ••• ••• 0123`; null when none (POST /api/phone/send, then /api/phone/verify)' }),
  phone_verified: Type.Boolean({ description: 'a phone is verified: `user:phone` can be offered to sites, and account recovery by SMS works' }),
  role: Type.Union([Type.Literal('user'), Type.Literal('admin')]),
  created_at: Timestamp,
});

/** The answer of every sign-in (password, passkey): the user and the session secret. */
export const SignedInOut = Type.Object({
  user: UserOut,
  session_token: Type.String({ description: 'for native clients: send as `Authorization: Bearer <token>`; browsers get the `session` cookie' }),
  expires_at: Timestamp,
});

export const userOut = (accounts: Accounts, u: UserRecord) => ({
  id: u.id,
  email: u.email,
  display_name: u.displayName,
  phone: maskPhone(u.phone),
  phone_verified: u.phoneVerified,
  role: accounts.role(u),
  created_at: iso(u.createdAt),
});

export const signedInOut = (accounts: Accounts, signedIn: SignedIn) => ({
  user: userOut(accounts, signedIn.user),
  session_token: signedIn.sessionToken,
  expires_at: iso(signedIn.expiresAt),
});
