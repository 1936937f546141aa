// Auth.js with Mandate as an OpenID Connect provider: agents sign in here, each sign-in approved by
// the agent's owner. Nothing Mandate-specific but the issuer: discovery, PKCE (S256) and the ID
// token's checks are Auth.js's own.
import type { ExpressAuthConfig } from '@auth/express';
import type { OIDCConfig } from '@auth/express/providers';
import { endedSessions } from './ended-sessions.ts';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name} (see docs/sites/oidc.md, "Set up with Auth.js")`);
  return value;
}

/** Mandate's base URL, as its discovery document's `issuer` says it (no trailing slash). */
export const issuer = env('AUTH_MANDATE_ISSUER');
/** The `client_id` Mandate gave when the site was registered. */
export const clientId = env('AUTH_MANDATE_ID');

const SESSION_MAX_AGE_SEC = 30 * 24 * 60 * 60;
export const ended = endedSessions(SESSION_MAX_AGE_SEC * 1000);

const mandate: OIDCConfig<Record<string, unknown>> = {
  id: 'mandate', // the callback is /auth/callback/mandate: register that redirect URI
  name: 'Mandate',
  type: 'oidc',
  issuer,
  clientId,
  clientSecret: env('AUTH_MANDATE_SECRET'),
  // Mandate knows `openid` and `profile`. Checks: Auth.js's default, PKCE (Mandate requires S256).
  authorization: { params: { scope: 'openid profile' } },
};

export const authConfig: ExpressAuthConfig = {
  providers: [mandate],
  secret: env('AUTH_SECRET'), // encrypts the session cookie: 32 random bytes or more
  // Auth.js builds its URLs (the redirect URI) from the Host header. Mandate accepts only the
  // redirect URIs you registered, so a forged Host leads nowhere.
  trustHost: true,
  session: { strategy: 'jwt', maxAge: SESSION_MAX_AGE_SEC },
  callbacks: {
    // At sign-in `profile` holds the ID token's claims: keep who signed in and which sign-in it was.
    // At every later read: a session whose Mandate sign-in ended is over (null clears the cookie).
    jwt({ token, profile }) {
      if (profile) Object.assign(token, { sub: profile.sub, act: profile.act, sid: profile.sid });
      return typeof token.sid === 'string' && ended.has(token.sid) ? null : token;
    },
    // What getSession() answers: the name, the person (pairwise `sub`), the agent (`act`), the sid.
    session: ({ session, token }) => Object.assign(session, { sub: token.sub, act: token.act, sid: token.sid }),
  },
};
