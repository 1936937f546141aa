/**
 * The client metadata a public client describes itself with (RFC 7591 §2), read from a registration
 * request or a Client ID Metadata Document (decisions §28). Pure: the caller turns a problem into
 * its protocol's error (`invalid_redirect_uri` / `invalid_client_metadata` for registration,
 * `invalid_client` for a metadata document).
 */
import { MAX_REDIRECT_URI_LENGTH, clientNameProblem, redirectUrisProblem } from './client-rules.ts';

export interface PublicClientMetadata {
  name: string;
  redirectUris: string[];
  clientUri: string | null;
  logoUri: string | null;
}

export type MetadataProblem = { error: 'invalid_redirect_uri' | 'invalid_client_metadata'; problem: string };

/** The name a registration without `client_name` gets (RFC 7591 makes it optional). */
export const UNNAMED_CLIENT = 'Unnamed app';

const GRANT_TYPES = ['authorization_code', 'refresh_token'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const metadataProblem = (problem: string): MetadataProblem => ({ error: 'invalid_client_metadata', problem });

/** `client_uri` and `logo_uri`: shown to the owner as links, never fetched; https: URLs only. */
function linkProblem(field: string, v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || v.length > MAX_REDIRECT_URI_LENGTH || !URL.canParse(v) || new URL(v).protocol !== 'https:') return `${field} must be an https: URL of at most ${MAX_REDIRECT_URI_LENGTH} characters`;
  return null;
}

/** What a public client may ask for: no secret, the code flow, PKCE. */
function publicClientProblem(m: Record<string, unknown>): string | null {
  const method = m['token_endpoint_auth_method'];
  // Absent means `none` here (RFC 7591's default, client_secret_basic, needs a secret no public client has).
  if (method !== undefined && method !== 'none') return `token_endpoint_auth_method must be "none": only public clients (PKCE, no secret) are accepted this way; an owner registers a confidential client in the app`;
  const grants = m['grant_types'];
  if (grants !== undefined && (!isStrings(grants) || !grants.every((g) => GRANT_TYPES.includes(g)))) return `grant_types may hold only ${GRANT_TYPES.join(' and ')}`;
  const responses = m['response_types'];
  if (responses !== undefined && (!isStrings(responses) || !responses.every((r) => r === 'code'))) return 'response_types may hold only "code"';
  return null;
}

/**
 * Reads the metadata; `defaultName` stands in for a missing `client_name` (registration), or null
 * when it is required (metadata documents). Unknown members are ignored (RFC 7591 §2).
 */
export function readPublicClientMetadata(raw: unknown, defaultName: string | null): PublicClientMetadata | MetadataProblem {
  if (!isObject(raw)) return metadataProblem('the client metadata must be a JSON object');
  const uris = raw['redirect_uris'];
  if (!isStrings(uris)) return { error: 'invalid_redirect_uri', problem: 'redirect_uris must be an array of strings' };
  const uriProblem = redirectUrisProblem(uris);
  if (uriProblem !== null) return { error: 'invalid_redirect_uri', problem: uriProblem };
  const rawName = raw['client_name'] ?? defaultName;
  if (typeof rawName !== 'string') return metadataProblem(defaultName === null ? 'client_name is required (a string: what the owner sees)' : 'client_name must be a string');
  const nameProblem = clientNameProblem(rawName, 'client_name');
  if (nameProblem !== null) return metadataProblem(nameProblem);
  const other = publicClientProblem(raw) ?? linkProblem('client_uri', raw['client_uri']) ?? linkProblem('logo_uri', raw['logo_uri']);
  if (other !== null) return metadataProblem(other);
  return {
    name: rawName.trim(),
    redirectUris: [...uris],
    clientUri: typeof raw['client_uri'] === 'string' ? raw['client_uri'] : null,
    logoUri: typeof raw['logo_uri'] === 'string' ? raw['logo_uri'] : null,
  };
}

export const isMetadataProblem = (v: PublicClientMetadata | MetadataProblem): v is MetadataProblem => 'problem' in v;
