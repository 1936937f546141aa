/**
 * Which `client_id` values name a Client ID Metadata Document (decisions §28), and whether that URL
 * may be fetched. Pure. The rules of draft-ietf-oauth-client-id-metadata-document §3: https:, a
 * path, no fragment, no user or password, no `.` or `..` segments; and the outbound guard's rules
 * (§24), so that an address the guard would refuse is refused before anything is fetched; under
 * its loopback setting, `http:` only on a loopback host.
 */
import type { OutboundPolicy } from '../../outbound/types.ts';
import { checkOutboundUrl } from '../../outbound/url-policy.ts';
import { isDevelopmentRedirect } from './client-rules.ts';

/** A `client_id` with a scheme is a URL; owner and registered ids (`c_…`, `rc_…`) never have one. */
export const looksLikeMetadataUrl = (clientId: string): boolean => /^https?:\/\//i.test(clientId);

export function metadataUrlProblem(clientId: string, policy: OutboundPolicy): string | null {
  const refusal = checkOutboundUrl(clientId, policy, 'a client_id URL');
  if (refusal !== null) return refusal.message;
  // The loopback setting lets the guard fetch http: anywhere; a client_id is http: only on loopback (§28).
  if (!isDevelopmentRedirect(new URL(clientId)) && !/^https:/i.test(clientId)) return 'a client_id URL must be https: (http: only on a loopback host, and only in development)';
  // On the text: the parser would quietly resolve dot segments and drop an empty fragment.
  if (clientId.includes('#')) return 'a client_id URL must not contain a fragment (#...)';
  const path = clientId.replace(/^https?:\/\/[^/?]*/i, '').split('?')[0] ?? '';
  if (path === '' || path === '/') return 'a client_id URL must have a path, such as https://app.example/oauth/client.json';
  if (path.split('/').some((seg) => seg === '.' || seg === '..' || seg.toLowerCase() === '%2e' || seg.toLowerCase() === '%2e%2e')) return 'a client_id URL must not contain . or .. path segments';
  return null;
}
