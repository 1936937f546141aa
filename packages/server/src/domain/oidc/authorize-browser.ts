/**
 * /oidc/authorize from a person's browser (decisions §28: no agent header). The same first steps as
 * an agent's (client, redirect URI exactly as registered, `state`: 400 without a redirect), the same
 * request checks (PKCE S256, code flow), then the resource (RFC 8707) and scopes. The answer is the
 * request the consent page shows, or an error redirect to the listed redirect URI (with `iss`).
 */
import { LIMITS, SCOPE_PATTERN } from '@mandate/protocol';
import { type AuthorizeParams, RedirectError, checkCommon, clientAndRedirect, errorRedirect } from './authorize.ts';
import { SUPPORTED_SCOPES, type OidcDeps } from './deps.ts';
import type { KnownClient } from './known-client.ts';

/** What a person is asked to approve: everything the code will carry, checked. */
export interface BrowserAuthorization {
  clientId: string;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  nonce: string | null;
  /** The resource URL exactly as sent; null for a plain `openid` sign-in. */
  resource: string | null;
  /**
   * The scopes as asked, in order, without repeats: the resource server's own (each matching
   * SCOPE_PATTERN, at most LIMITS.maxScopes; possibly none), or for a plain sign-in the OIDC scopes.
   */
  scopes: string[];
  dpopJkt: string | null;
}

export type BrowserAuthorizeAnswer =
  | { kind: 'consent'; client: KnownClient; request: BrowserAuthorization }
  | { kind: 'redirect'; location: string };

const OIDC_SCOPES: readonly string[] = SUPPORTED_SCOPES;

/** Checks a browser's authorization request. Throws a 400 AppError while the redirect URI is not known good. */
export async function browserAuthorize(d: OidcDeps, params: AuthorizeParams, repeated: string[], ip: string | null): Promise<BrowserAuthorizeAnswer> {
  const { client, redirectUri, state } = await clientAndRedirect(d, params, ip);
  try {
    const { prompts, codeChallenge, nonce, rawScope, dpopJkt } = checkCommon(params, repeated);
    // The person always answers a consent page: nothing here can be silent.
    if (prompts.includes('none')) throw new RedirectError('consent_required', 'the person must approve this in the browser, and prompt=none forbids asking');
    const { resource, scopes } = resourceAndScopes(params.get('resource'), rawScope);
    return { kind: 'consent', client, request: { clientId: client.id, redirectUri, state, codeChallenge, nonce, resource, scopes, dpopJkt } };
  } catch (e) {
    if (e instanceof RedirectError) return { kind: 'redirect', location: errorRedirect(d.issuer, redirectUri, state, e.error, e.description) };
    throw e;
  }
}

/**
 * The resource and scopes of a request (RFC 8707, decisions §28): `resource` is an absolute http(s)
 * URL without fragment, required unless the request is a plain sign-in (only OIDC scopes, `openid`
 * among them). Throws RedirectError.
 */
export function resourceAndScopes(rawResource: string | undefined, rawScope: string): { resource: string | null; scopes: string[] } {
  const scopes = [...new Set(rawScope.split(' ').filter((s) => s !== ''))];
  if (rawResource === undefined || rawResource === '') {
    const plainSignIn = scopes.length > 0 && scopes.every((s) => OIDC_SCOPES.includes(s));
    if (!plainSignIn) throw new RedirectError('invalid_target', 'resource is required (RFC 8707): the URL of the MCP server or API to act at; only a plain sign-in (scopes openid, profile, email, phone) goes without one');
    if (!scopes.includes('openid')) throw new RedirectError('invalid_scope', 'a sign-in without resource must ask for "openid"');
    return { resource: null, scopes };
  }
  const problem = resourceProblem(rawResource);
  if (problem !== null) throw new RedirectError('invalid_target', `resource ${problem}`);
  if (scopes.length > LIMITS.maxScopes) throw new RedirectError('invalid_scope', `at most ${LIMITS.maxScopes} scopes`);
  const bad = scopes.find((s) => !SCOPE_PATTERN.test(s));
  if (bad !== undefined) throw new RedirectError('invalid_scope', `scope "${bad.slice(0, 64)}" is not a valid scope: 1 to 64 of a-z 0-9 _ : . -`);
  return { resource: rawResource, scopes };
}

/** Why `raw` cannot be a resource indicator, or null. Checked on the text: the parser would drop an empty fragment. */
export function resourceProblem(raw: string): string | null {
  if (raw.includes('#')) return 'must not contain a fragment (#...)';
  if (!/^[\x21-\x7e]+$/.test(raw)) return 'must be printable ASCII without spaces (percent-encode anything else)';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL such as https://mcp.example/mcp';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http: or https: URL';
  if (url.username !== '' || url.password !== '') return 'must not contain a user name or password';
  return null;
}
