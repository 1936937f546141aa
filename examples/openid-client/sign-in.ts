// A site where agents sign in with Mandate, with openid-client v6 on node:http: the code flow with
// PKCE (GET /login, GET /auth/callback/mandate), who is signed in (GET /me) and a refresh (POST /refresh).
//   AUTH_MANDATE_ISSUER  Mandate's base URL, e.g. https://mandate.example
//   AUTH_MANDATE_ID      the client_id Mandate gave at registration
//   AUTH_MANDATE_SECRET  its client_secret
//   SITE_URL             this site's public address, e.g. https://shop.example
//   PORT, HOST           where to listen (3000, 127.0.0.1)
// Register the client with the redirect URI <SITE_URL>/auth/callback/mandate.
// Run: node --import tsx examples/openid-client/sign-in.ts
import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import * as client from 'openid-client';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name}`);
  return value;
}

const issuer = new URL(env('AUTH_MANDATE_ISSUER'));
const siteUrl = env('SITE_URL');
// The Auth.js set-up's callback path too, so that the guide's one registration serves either site.
const callbackPath = '/auth/callback/mandate';
const redirectUri = `${siteUrl}${callbackPath}`;
const secure = siteUrl.startsWith('https:') ? '; Secure' : '';

// Discovery: Mandate's endpoints and keys. openid-client refuses http: unless told to allow it; an
// http: issuer is only ever a Mandate on your own machine.
const config = await client.discovery(issuer, env('AUTH_MANDATE_ID'), env('AUTH_MANDATE_SECRET'), undefined,
  issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : undefined);

// In memory, by random cookie values: sign-ins started here, and signed-in sessions.
const started = new Map<string, { verifier: string; state: string }>();
const sessions = new Map<string, { claims: client.IDToken; refreshToken: string }>();

const cookie = (header: string | undefined, name: string) => header?.split(/;\s*/).find((c) => c.startsWith(`${name}=`))?.slice(name.length + 1) ?? '';
const newId = () => randomBytes(16).toString('base64url');
function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}

createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', siteUrl);
  const session = sessions.get(cookie(req.headers.cookie, 'session'));
  try {
    if (req.method === 'GET' && url.pathname === '/login') {
      const id = newId();
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      started.set(id, { verifier, state });
      const authorize = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri, scope: 'openid profile', state,
        code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      });
      res.writeHead(302, { location: authorize.href, 'set-cookie': `signin=${id}; Path=/; HttpOnly; SameSite=Lax${secure}` }).end();
    } else if (req.method === 'GET' && url.pathname === callbackPath) {
      const id = cookie(req.headers.cookie, 'signin');
      const checks = started.get(id);
      started.delete(id);
      if (!checks) return json(res, 400, { error: 'no sign-in was started in this browser' });
      // Checks iss and state, redeems the code with the PKCE verifier, validates the ID token.
      const tokens = await client.authorizationCodeGrant(config, url, { pkceCodeVerifier: checks.verifier, expectedState: checks.state });
      const sessionId = newId();
      sessions.set(sessionId, { claims: tokens.claims()!, refreshToken: tokens.refresh_token! });
      res.writeHead(302, { location: '/me', 'set-cookie': `session=${sessionId}; Path=/; HttpOnly; SameSite=Lax${secure}` }).end();
    } else if (req.method === 'GET' && url.pathname === '/me' && session) {
      // sub: the person behind the agent (pairwise: stable here, different at other sites);
      // act: the agent {sub, name}; name: "<agent> (agent of <person>)"; sid: this sign-in.
      const { sub, act, name, sid, amr } = session.claims;
      json(res, 200, { sub, act, name, sid, amr });
    } else if (req.method === 'POST' && url.pathname === '/refresh' && session) {
      // Refresh tokens rotate: keep the new one. When the owner ended the sign-in, this fails.
      try {
        const tokens = await client.refreshTokenGrant(config, session.refreshToken);
        session.refreshToken = tokens.refresh_token!;
        session.claims = tokens.claims() ?? session.claims;
        json(res, 200, { sub: session.claims.sub, expires_in: tokens.expires_in });
      } catch (e) {
        if (!(e instanceof client.ResponseBodyError && e.error === 'invalid_grant')) throw e;
        sessions.delete(cookie(req.headers.cookie, 'session'));
        json(res, 401, { error: 'the sign-in has ended' });
      }
    } else {
      json(res, url.pathname === '/me' || url.pathname === '/refresh' ? 401 : 404, { error: 'not signed in, or no such page' });
    }
  } catch (e) {
    json(res, 500, { error: e instanceof Error ? e.message : String(e) });
  }
}).listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1', () => console.log(`listening on ${siteUrl}`));
