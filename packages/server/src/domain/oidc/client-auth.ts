/**
 * Client authentication at the token endpoint: `client_secret_basic` (credentials form-urlencoded
 * before base64, RFC 6749 §2.3.1: `c_x` may arrive as `c%5Fx`), `client_secret_post`, or `none` for
 * a public client (PKCE is its proof). Exactly one method per request; every failure is the same
 * `invalid_client` (401, WWW-Authenticate).
 */
import type { OidcDeps } from './deps.ts';
import { type KnownClient, ownerClient } from './known-client.ts';
import { invalidClient, invalidRequest } from './oauth-error.ts';
import { resolveClient } from './resolve-client.ts';

function formDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    throw invalidClient('client credentials in the Authorization header are not form-urlencoded');
  }
}

function basicCredentials(header: string): { id: string; secret: string } {
  const m = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header.trim());
  if (!m?.[1]) throw invalidClient('Authorization must be Basic with base64 of client_id:client_secret');
  const text = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) throw invalidClient('Basic credentials must be client_id:client_secret');
  return { id: formDecode(text.slice(0, colon)), secret: formDecode(text.slice(colon + 1)) };
}

export async function authenticateTokenClient(d: OidcDeps, authorization: string | undefined, form: Map<string, string>): Promise<KnownClient> {
  const postedId = form.get('client_id');
  const postedSecret = form.get('client_secret');
  if (authorization !== undefined && authorization !== '') {
    if (postedSecret !== undefined) throw invalidRequest('use one client authentication method: Basic or client_secret in the body, not both');
    const { id, secret } = basicCredentials(authorization);
    if (postedId !== undefined && postedId !== id) throw invalidRequest('client_id in the body differs from the Basic credentials');
    const client = await d.clients.authenticateClient(id, secret);
    if (!client) throw invalidClient('client authentication failed');
    return ownerClient(client);
  }
  if (postedId === undefined) throw invalidClient('client authentication is required (client_secret_basic, client_secret_post, or client_id alone for a public client)');
  if (postedSecret !== undefined) {
    const client = await d.clients.authenticateClient(postedId, postedSecret);
    if (!client) throw invalidClient('client authentication failed');
    return ownerClient(client);
  }
  // A self-registered client or a metadata document URL is public; an owner's client may be either.
  const client = await resolveClient(d, postedId);
  if (!client.isPublic) throw invalidClient('client authentication failed (a confidential client must send its secret)');
  return client;
}
