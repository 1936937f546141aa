/**
 * Dynamic client registration (RFC 7591, decisions §28) for public clients only: an MCP client
 * registers its name and redirect URIs and gets a `client_id` (`rc_…`) and no secret; PKCE is its
 * proof. 10 registrations per hour per address (IPv4 address or IPv6 /64; 40 per IPv6 /48). No
 * owner: nothing happens for anyone until an owner approves a sign-in of that client.
 */
import type { Clock } from '../../clock.ts';
import type { Store } from '../../store/ports/index.ts';
import { checkClient } from '../client-limit.ts';
import { newId } from '../ids.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { UNNAMED_CLIENT, isMetadataProblem, readPublicClientMetadata } from './client-metadata.ts';
import { OAuthError } from './oauth-error.ts';

export const REGISTRATION_LIMIT = { perAddress: 10, perNetwork: 40, windowSec: 3600 } as const;

export interface RegistrationDeps {
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
}

/** The registration response (RFC 7591 §3.2.1): the metadata as registered, with what the service chose. */
export interface RegisteredClient {
  client_id: string;
  client_id_issued_at: number;
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method: 'none';
  grant_types: string[];
  response_types: string[];
  client_uri?: string;
  logo_uri?: string;
}

/** Registers a public client; 400 `invalid_redirect_uri` / `invalid_client_metadata`, 429 past the limit. */
export async function registerClient(d: RegistrationDeps, body: unknown, ip: string): Promise<RegisteredClient> {
  const metadata = readPublicClientMetadata(body, UNNAMED_CLIENT);
  if (isMetadataProblem(metadata)) throw new OAuthError(metadata.error, metadata.problem);
  // Counted once the request is valid: a refused one stores nothing.
  await checkClient(d.limiter, 'oidc-register', ip, REGISTRATION_LIMIT);
  const now = d.clock.now();
  const record = { id: newId('rc'), ...metadata, createdAt: now };
  await d.store.oidcRegisteredClients.create(record);
  return {
    client_id: record.id,
    client_id_issued_at: Math.floor(now / 1000),
    client_name: record.name,
    redirect_uris: record.redirectUris,
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    ...(record.clientUri === null ? {} : { client_uri: record.clientUri }),
    ...(record.logoUri === null ? {} : { logo_uri: record.logoUri }),
  };
}
