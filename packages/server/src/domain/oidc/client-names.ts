/**
 * The name an owner sees for the client of a sign-in, from what is stored, without fetching
 * anything: an owner's or a self-registered client's name; for a metadata document client (whose
 * document is not stored) the host of its client_id URL.
 */
import type { Store } from '../../store/ports/index.ts';
import { looksLikeId } from '../ids.ts';
import { looksLikeMetadataUrl } from './metadata-document-url.ts';

export const REMOVED_CLIENT = 'a site (client removed)';

export async function storedClientName(store: Pick<Store, 'oidcClients' | 'oidcRegisteredClients'>, clientId: string): Promise<string> {
  if (looksLikeMetadataUrl(clientId)) return URL.canParse(clientId) ? new URL(clientId).host : REMOVED_CLIENT;
  const client = looksLikeId('rc', clientId) ? await store.oidcRegisteredClients.byId(clientId) : await store.oidcClients.byId(clientId);
  return client?.name ?? REMOVED_CLIENT;
}
