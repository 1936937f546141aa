import type { McpConfig } from './options.ts';

/** RFC 9728 protected resource metadata, as `mcpAuth` serves it. */
export type ProtectedResourceMetadata = {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: ['header'];
  dpop_signing_alg_values_supported: ['ES256'];
  resource_name: string;
};

export const WELL_KNOWN = '/.well-known/oauth-protected-resource';

export function metadataOf(c: McpConfig): ProtectedResourceMetadata {
  return {
    resource: c.resource,
    authorization_servers: [c.verifier.serviceUrl],
    scopes_supported: c.scopesSupported,
    bearer_methods_supported: ['header'],
    dpop_signing_alg_values_supported: ['ES256'],
    resource_name: c.resourceName,
  };
}

/**
 * Where the metadata is served: the well-known path with the resource's path appended (RFC 9728 §3.1,
 * where MCP clients look first), and the bare well-known path (where older clients look).
 */
export function metadataPaths(c: McpConfig): string[] {
  const path = c.resourceUrl.pathname === '/' ? '' : c.resourceUrl.pathname;
  return path === '' ? [WELL_KNOWN] : [WELL_KNOWN + path, WELL_KNOWN];
}

/** The metadata URL named in every challenge: on the resource's origin, at the first path above. */
export function metadataUrl(c: McpConfig): string {
  return c.resourceUrl.origin + (metadataPaths(c)[0] ?? WELL_KNOWN);
}
