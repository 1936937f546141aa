/**
 * The peer of the pass issuance benchmark, as its own process: oidc-provider 8 (panva) issuing
 * DPoP-bound access tokens with the `client_credentials` grant (`features.clientCredentials`,
 * `features.dPoP`), one confidential client (`client_secret_basic`), the library's default in-memory
 * adapter. Per call: client authentication, the DPoP proof checked (one ES256 signature, its key
 * imported from the proof's header) and its jti stored against replay, an opaque access token bound
 * to the proof's key stored (the library's default format: no signature). Nothing is written to disk.
 * Features are the defaults plus those two, minus dev interactions, RP-initiated logout, PAR and
 * resource indicators (which would make the token a JWT only with a resource server configured).
 * Everything is the provider's own route (`POST /token`). Env: PORT, PEER_CLIENT_ID, PEER_CLIENT_SECRET.
 */
import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import { serveUntilStopped } from './serve.ts';

const port = Number(process.env.PORT);
const clientId = process.env.PEER_CLIENT_ID ?? 'bench-client';
const clientSecret = process.env.PEER_CLIENT_SECRET ?? '';

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  features: {
    clientCredentials: { enabled: true },
    dPoP: { enabled: true },
    devInteractions: { enabled: false },
    rpInitiatedLogout: { enabled: false },
    pushedAuthorizationRequests: { enabled: false },
    resourceIndicators: { enabled: false },
  },
  // A pass lives 10 minutes (decisions §5); so does the peer's access token.
  ttl: { ClientCredentials: 600 },
  cookies: { keys: ['bench-cookie-key-not-a-secret'] },
});
// The library logs its development warnings (in-memory adapter, cookie keys) at start; not errors.
provider.on('server_error', (_ctx, err) => console.error('oidc-provider server_error', err));

const handle = provider.callback();
const server = createServer((req, res) => void handle(req, res));
serveUntilStopped(server, port);
