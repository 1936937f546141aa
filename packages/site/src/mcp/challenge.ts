/**
 * `WWW-Authenticate` challenges (RFC 6750 §3, RFC 9449 §7.1, RFC 9728 §5.1). Values go in quoted
 * strings: quotes and backslashes are escaped and anything outside printable ASCII is dropped, so a
 * description can never break the header (descriptions never hold token bytes).
 */
const quoted = (value: string): string => `"${value.replace(/[^\x20-\x7e]/g, '').replace(/["\\]/g, (c) => `\\${c}`)}"`;

export type Challenge = {
  resourceMetadata: string;
  scopes?: string[];
  error?: 'invalid_token' | 'insufficient_scope' | 'invalid_request';
  description?: string;
};

/** The Bearer challenge, then a DPoP one (clients that hold a key may bind their pass). */
export function wwwAuthenticate(c: Challenge): string {
  const params: string[] = [];
  if (c.error !== undefined) params.push(`error=${quoted(c.error)}`);
  if (c.description !== undefined) params.push(`error_description=${quoted(c.description.slice(0, 300))}`);
  if (c.scopes !== undefined && c.scopes.length > 0) params.push(`scope=${quoted(c.scopes.join(' '))}`);
  params.push(`resource_metadata=${quoted(c.resourceMetadata)}`);
  return `Bearer ${params.join(', ')}, DPoP algs="ES256"`;
}
