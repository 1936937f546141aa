/**
 * `resolveClient`: the client a `client_id` names (decisions §18, §28), for the authorization and
 * token endpoints. An owner's client (`c_…`), a self-registered one (`rc_…`), or a URL whose Client
 * ID Metadata Document describes it. Throws an OAuthError (`invalid_request` without a client_id,
 * `invalid_client` otherwise) that the caller answers in its own way.
 */
import type { Store } from '../../store/ports/index.ts';
import { looksLikeId } from '../ids.ts';
import { type KnownClient, ownerClient, registeredClient } from './known-client.ts';
import type { MetadataDocuments } from './metadata-documents.ts';
import { looksLikeMetadataUrl } from './metadata-document-url.ts';
import { invalidClient, invalidRequest } from './oauth-error.ts';

export interface ResolveClientDeps {
  store: Store;
  metadataDocuments: MetadataDocuments;
}

/** `caller`: the address of the request naming the client (the metadata documents' fetch limits count per caller). */
export async function resolveClient(d: ResolveClientDeps, clientId: string | undefined, caller: string | null = null): Promise<KnownClient> {
  if (clientId === undefined || clientId === '') throw invalidRequest('client_id is missing');
  if (looksLikeMetadataUrl(clientId)) return d.metadataDocuments.client(clientId, caller);
  if (looksLikeId('c', clientId)) {
    const client = await d.store.oidcClients.byId(clientId);
    if (client) return ownerClient(client);
  } else if (looksLikeId('rc', clientId)) {
    const client = await d.store.oidcRegisteredClients.byId(clientId);
    if (client) return registeredClient(client);
  }
  throw invalidClient('unknown client_id: a site registers its client first (POST /api/oidc/clients), an app registers itself (POST /oidc/register) or uses the https URL of its client metadata document as client_id');
}
