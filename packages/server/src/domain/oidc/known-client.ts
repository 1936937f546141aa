/**
 * A client as the authorization and token endpoints see it, whichever way it became known
 * (decisions §18, §28): registered by an owner (`c_`), registered by itself (RFC 7591, `rc_`), or
 * described by the Client ID Metadata Document at its `client_id` URL.
 */
import type { OidcClientRecord, OidcRegisteredClientRecord } from '../../store/ports/index.ts';

export type ClientKind = 'owner' | 'registered' | 'metadata_document';

export interface KnownClient {
  /** The `client_id` exactly as the client sends it. */
  id: string;
  kind: ClientKind;
  name: string;
  /** Compared exactly, as strings, at the authorization endpoint. */
  redirectUris: string[];
  /** Only an owner's client can be confidential; the other kinds prove themselves with PKCE alone. */
  isPublic: boolean;
  /** Origins proven by the site's verification file (owner clients only; empty otherwise). */
  verifiedOrigins: string[];
  /** Shown, never fetched by the service. */
  clientUri: string | null;
  logoUri: string | null;
}

export const ownerClient = (c: OidcClientRecord): KnownClient => ({
  id: c.id, kind: 'owner', name: c.name, redirectUris: c.redirectUris, isPublic: c.isPublic,
  verifiedOrigins: c.verifiedOrigins, clientUri: null, logoUri: null,
});

export const registeredClient = (c: OidcRegisteredClientRecord): KnownClient => ({
  id: c.id, kind: 'registered', name: c.name, redirectUris: c.redirectUris, isPublic: true,
  verifiedOrigins: [], clientUri: c.clientUri, logoUri: c.logoUri,
});
