import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { UserRecord } from '../../../store/ports/index.ts';
import type { Services } from '../../../services.ts';
import { SignedInOut, UserOut, signedInOut, userOut as userOutOf } from './user-out.ts';
import { Email, ReadableLine, withErrors } from '../../schemas/common.ts';
import { grantOut, pendingOut } from '../../schemas/approvals.ts';
import { agentNames } from '../../../domain/agents/agent-names.ts';
import { liveSignInsByGrant } from '../../../domain/oidc/owner-sign-ins.ts';
import { AppError } from '../../../domain/errors.ts';
import { SIGNUP_LIMIT } from '../../../domain/accounts/accounts.ts';
import { CLAIM_MAIL_LIMIT, CLAIM_PATH } from '../../../domain/accounts/address-takeover.ts';

const PendingSignUpOut = Type.Object({
  pending: Type.Literal(true),
  email: Type.String({ description: 'the address the link went to' }),
  expires_in: Type.Integer({ description: 'seconds the link stays valid: 86400' }),
  detail: Type.String(),
  next_step: Type.String(),
});

const UserIn = Type.Object({
  email: Email,
  password: Type.String({ minLength: 8, maxLength: 1024, description: 'at least 8 characters' }),
  display_name: Type.Optional(ReadableLine({ minLength: 1, maxLength: 100 })),
});
const LoginIn = Type.Object({ email: Type.String({ maxLength: 254 }), password: Type.String({ maxLength: 1024 }) });
const ProfileIn = Type.Object({
  display_name: Type.Optional(ReadableLine({ minLength: 1, maxLength: 100 })),
  email: Type.Optional(Email),
  current_password: Type.Optional(Type.String({ maxLength: 1024, description: 'with `email`, from a password session' })),
});

/** The owner with whether the email is verified (decisions §25): what /api/me and PATCH /api/me answer. */
const OwnerOut = Type.Composite([
  UserOut,
  Type.Object({ email_verified: Type.Boolean({ description: 'the address was proven by the link mailed to it; until then it is not shared with sites and gives no admin role' }) }),
]);

const MeOut = Type.Composite([
  OwnerOut,
  Type.Object({
    pending: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'open requests for the owner\'s agents' }),
    grants: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'access the owner has approved' }),
    unread_notifications: Type.Integer({ description: 'unread notifications of the last 30 days (GET /api/notifications)' }),
    session_method: Type.Union([Type.Literal('password'), Type.Literal('passkey'), Type.Literal('recovery'), Type.Literal('oauth')], { description: 'how this session was made: adding or removing a passkey, or linking an identity provider, needs a passkey session once the owner has a passkey; `oauth`: with a linked identity provider; `recovery` (POST /api/recovery/complete): the account has no passkey left and should add one' }),
  }),
]);

export async function accountRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const userOut = (u: UserRecord) => ({ ...userOutOf(s.accounts, u), email_verified: u.emailVerified });

  app.post('/api/users', {
    schema: {
      summary: 'Create an owner account and sign in',
      description: `At most ${SIGNUP_LIMIT.perAddress} sign-ups per client address (an IPv6 client: per /64) and ${SIGNUP_LIMIT.perNetwork} per IPv6 /48 per hour, then 429 with Retry-After. An email that an account has verified: 409 with \`next_step\`. An email that an account holds WITHOUT having verified it (anyone may sign up with any address): 202 \`{pending: true, email, expires_in, detail, next_step}\`, no account and no session yet; a single-use link (24 h) is mailed to the address, and confirming it (POST ${CLAIM_PATH}) creates this account with the address verified and takes the address from the other account. At most ${CLAIM_MAIL_LIMIT.perAddress} such mails per address per hour (429).`,
      tags: ['owner'],
      body: UserIn,
      response: withErrors({ 200: SignedInOut, 202: PendingSignUpOut }, 409, 429),
    },
  }, async (request, reply) => {
    const { email, password, display_name } = request.body;
    const made = await s.accounts.signUp({ email, password, displayName: display_name }, request.ip);
    if ('pending' in made) return reply.code(202).send(made);
    s.auth.signIn(reply, made);
    return signedInOut(s.accounts, made);
  });

  app.post('/api/login', {
    schema: {
      summary: 'Sign in with email and password',
      description: 'Unknown email and wrong password both answer 401 `invalid email or password`. Failures are counted per (account, client address), per address, per IPv6 /48 (4 times the per-address limit) and per account (decisions §25); an IPv6 client address counts as its /64. An address (or /48) that keeps failing gets 429 with Retry-After, while once the account is over its limit an address with no failure for it still gets one attempt per window, so guessing cannot lock the owner out.',
      tags: ['owner'],
      body: LoginIn,
      response: withErrors({ 200: SignedInOut }, 401, 429),
    },
  }, async (request, reply) => {
    const signedIn = await s.accounts.logIn(request.body, request.ip);
    s.auth.signIn(reply, signedIn);
    return signedInOut(s.accounts, signedIn);
  });

  app.post('/api/logout', {
    schema: { summary: 'End this session', tags: ['owner'], response: withErrors({ 200: Type.Object({ ok: Type.Boolean() }) }, 401, 403) },
  }, async (request, reply) => {
    const owner = await s.auth.required(request);
    await s.accounts.logOut(owner.sessionHash);
    s.auth.signOut(reply);
    return { ok: true };
  });

  // The owner app's first question on opening. Signed out is an ordinary answer here, not an error:
  // a browser logs every 401 as a failed resource in the console, and a person opening the app
  // signed out has done nothing wrong. GET /api/me and every other owner route still answer 401.
  app.get('/api/session', {
    schema: {
      summary: 'Is this request signed in?',
      description: 'Answers 200 `{ "signed_in": false }` without a valid session (cookie or bearer token) and `{ "signed_in": true }` with one, so a client can choose between its sign-in page and GET /api/me without provoking a 401. It reveals nothing else; every other owner route, GET /api/me included, still answers 401 when signed out.',
      tags: ['owner'],
      response: withErrors({ 200: Type.Object({ signed_in: Type.Boolean() }) }),
    },
  }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    try {
      return { signed_in: (await s.auth.optional(request)) !== undefined };
    } catch (e) {
      // An expired or unknown bearer token: signed out, said without an error status. (Anything
      // else, a database failure say, stays an error: "signed out" would be a lie.)
      if (e instanceof AppError && e.status === 401) return { signed_in: false };
      throw e;
    }
  });

  app.get('/api/me', {
    schema: { summary: 'The signed-in owner, open requests and grants', description: '`email_verified`: whether the address was proven by its mailed link (POST /api/email/send); until then `user:email` is not offered to agents, the OIDC `email` scope releases nothing and ADMIN_EMAILS gives no admin role. `pending` holds at most the newest 50 open requests (an owner can have no more: decisions §25) and `grants` the newest 500 live grants (the per-owner site quota); `GET /api/grants` pages through grants.', tags: ['owner'], response: withErrors({ 200: MeOut }, 401) },
  }, async (request) => {
    const { user, method } = await s.auth.required(request);
    const [pending, grants, names, unread, signIns] = await Promise.all([
      s.approvals.pending(user.id), s.grants.listLive(user.id), agentNames(s.store.agents, user.id), s.inbox.unread(user.id), liveSignInsByGrant(s.store, user.id, s.clock.now()),
    ]);
    return { ...userOut(user), pending: pending.map(pendingOut), grants: grants.map((g) => grantOut(g, names, signIns)), unread_notifications: unread, session_method: method };
  });

  app.patch('/api/me', {
    schema: {
      summary: 'Update the profile: display name, email address',
      description: 'A new `email` starts verification over (decisions §25): the address is unverified (`email_verified` false: not shared with sites, no admin role) until the link of POST /api/email/send is opened, and links sent to the old address stop working; a verified old address is told of the change by mail. From a password session it needs `current_password` (missing or wrong: 403 with `next_step`); a passkey session need not. 409 when another account has the address; at most 10 changes per account per hour (429). The same address again changes nothing.',
      tags: ['owner'],
      body: ProfileIn,
      response: withErrors({ 200: OwnerOut }, 400, 401, 403, 409, 429),
    },
  }, async (request) => {
    const owner = await s.auth.required(request);
    const { email, current_password: currentPassword, display_name: displayName } = request.body;
    // The address first: a refused change leaves the name as it was too.
    if (email !== undefined) await s.emailVerification.change(owner, { email, ...(currentPassword === undefined ? {} : { currentPassword }) }, request.ip);
    return userOut(await s.accounts.updateProfile(owner.user.id, { displayName }));
  });
}
