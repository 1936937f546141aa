/**
 * The peer of the OIDC token benchmark, as its own process: oidc-provider 8 (panva) with one
 * confidential client (`client_secret_basic`, ID tokens ES256 with an EC P-256 key of its own),
 * refresh tokens rotated on every use (`rotateRefreshToken: true`, as Mandate's), the library's
 * default in-memory adapter, and `findAccount` answering one fixed account. Features are the
 * defaults minus what a refresh does not touch (dev interactions, RP-initiated logout, PAR, resource
 * indicators); `userinfo` stays on, so the access token is the library's default: opaque, stored
 * in the adapter, for its userinfo endpoint.
 *
 * Sign-ins are minted without interactions: `POST /bench/mint?n=N` creates N grants (scope
 * `openid`) and one refresh token each through `provider.Grant` and `provider.RefreshToken`, as the
 * code grant would, and answers their values. Everything else is the provider's own routes
 * (`POST /token`). Env: PORT, PEER_CLIENT_ID, PEER_CLIENT_SECRET, PEER_REDIRECT_URI.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import Provider, { type JWK } from 'oidc-provider';
import { serveUntilStopped } from './serve.ts';

const port = Number(process.env.PORT);
const clientId = process.env.PEER_CLIENT_ID ?? 'bench-client';
const clientSecret = process.env.PEER_CLIENT_SECRET ?? '';
const redirectUri = process.env.PEER_REDIRECT_URI ?? 'https://rp.example/cb';
const ACCOUNT_ID = 'bench-account';

const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
    id_token_signed_response_alg: 'ES256',
  }],
  jwks: { keys: [{ ...jwk, kid: 'peer-es256', alg: 'ES256', use: 'sig' } as JWK] },
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  features: {
    devInteractions: { enabled: false },
    rpInitiatedLogout: { enabled: false },
    pushedAuthorizationRequests: { enabled: false },
    resourceIndicators: { enabled: false },
  },
  rotateRefreshToken: true,
  // Mandate's lifetimes (decisions §18): ID and access tokens 10 minutes, a sign-in 30 days.
  ttl: { AccessToken: 600, IdToken: 600, RefreshToken: 30 * 86_400, Grant: 30 * 86_400 },
  cookies: { keys: ['bench-cookie-key-not-a-secret'] },
});
// The library logs its development warnings (in-memory adapter, cookie keys) at start; not errors.
provider.on('server_error', (_ctx, err) => console.error('oidc-provider server_error', err));

/** N sign-ins as the code grant would leave them: a grant with scope openid and a refresh token. */
async function mint(n: number): Promise<string[]> {
  const client = await provider.Client.find(clientId);
  if (!client) throw new Error('the bench client is not configured');
  const authTime = Math.floor(Date.now() / 1000);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const grant = new provider.Grant({ accountId: ACCOUNT_ID, clientId });
    grant.addOIDCScope('openid');
    const grantId = await grant.save();
    const token = new provider.RefreshToken({ client, accountId: ACCOUNT_ID, grantId, scope: 'openid', gty: 'authorization_code', authTime, amr: ['pwd'] });
    out.push(await token.save());
  }
  return out;
}

const handle = provider.callback();
const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://peer');
  if (req.method === 'POST' && url.pathname === '/bench/mint') {
    mint(Math.min(10_000, Math.max(1, Number(url.searchParams.get('n')) || 1))).then(
      (tokens) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ refresh_tokens: tokens })),
      (e: unknown) => res.writeHead(500).end(String(e)),
    );
    return;
  }
  void handle(req, res);
});
serveUntilStopped(server, port);
