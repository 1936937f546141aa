/**
 * Identity providers (decisions §15): OpenID Connect issuers the owner may sign in with and approve
 * with, once linked. `OAUTH_PROVIDERS=google,microsoft` names them; each then needs
 * `OAUTH_<NAME>_CLIENT_ID` and `OAUTH_<NAME>_CLIENT_SECRET`, and `OAUTH_<NAME>_ISSUER` unless the
 * name has a default issuer. `OAUTH_<NAME>_LABEL` is what the buttons say. An incomplete provider
 * stops the start: a half-configured button would only fail in front of the owner.
 */

export interface OAuthProviderConfig {
  /** Lower-case name: the path segment of /api/oauth/{name}/... and the redirect URI. */
  name: string;
  /** "Sign in with <label>". */
  label: string;
  /** The issuer identifier; discovery reads `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/** Issuers known by name, so an operator only sets the client id and secret for them. */
export const DEFAULT_ISSUERS: Readonly<Record<string, { issuer: string; label: string }>> = {
  google: { issuer: 'https://accounts.google.com', label: 'Google' },
  microsoft: { issuer: 'https://login.microsoftonline.com/common/v2.0', label: 'Microsoft' },
};

const NAME = /^[a-z][a-z0-9]{0,31}$/;
const SUFFIXES = ['ISSUER', 'CLIENT_ID', 'CLIENT_SECRET', 'LABEL'] as const;

/** `OAUTH_<NAME>_<SUFFIX>`: a per-provider key (checked against OAUTH_PROVIDERS by parseOAuthProviders). */
export const isOAuthProviderKey = (key: string): boolean => /^OAUTH_[A-Z][A-Z0-9]{0,31}_(ISSUER|CLIENT_ID|CLIENT_SECRET|LABEL)$/.test(key);

type Env = Record<string, string | undefined>;

/**
 * Reads every provider; problems go to `problems`. An http: issuer is accepted only with
 * OUTBOUND_ALLOW_LOOPBACK (development and tests, such as a test issuer on loopback).
 */
export function parseOAuthProviders(env: Env, allowInsecure: boolean, problems: string[]): OAuthProviderConfig[] {
  const get = (k: string): string | undefined => {
    const v = env[k];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const names = (get('OAUTH_PROVIDERS') ?? '').split(',').map((n) => n.trim().toLowerCase()).filter(Boolean);
  const out: OAuthProviderConfig[] = [];
  for (const name of names) {
    if (!NAME.test(name)) {
      problems.push(`OAUTH_PROVIDERS: "${name}" is not a provider name (lower-case letters and digits, starting with a letter)`);
      continue;
    }
    if (out.some((p) => p.name === name)) {
      problems.push(`OAUTH_PROVIDERS names "${name}" twice`);
      continue;
    }
    const key = (suffix: (typeof SUFFIXES)[number]) => `OAUTH_${name.toUpperCase()}_${suffix}`;
    const known = DEFAULT_ISSUERS[name];
    const issuer = get(key('ISSUER')) ?? known?.issuer;
    const clientId = get(key('CLIENT_ID'));
    const clientSecret = get(key('CLIENT_SECRET'));
    const missing = [issuer === undefined ? key('ISSUER') : null, clientId === undefined ? key('CLIENT_ID') : null, clientSecret === undefined ? key('CLIENT_SECRET') : null].filter((k) => k !== null);
    if (missing.length) {
      problems.push(`OAUTH_PROVIDERS names "${name}" but ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set (see docs/operations/identity-providers.md)`);
      continue;
    }
    if (!issuerProblem(key('ISSUER'), issuer!, allowInsecure, problems)) {
      out.push({ name, label: get(key('LABEL')) ?? known?.label ?? name, issuer: issuer!.replace(/\/+$/, ''), clientId: clientId!, clientSecret: clientSecret! });
    }
  }
  // A per-provider key for a name OAUTH_PROVIDERS does not list is most likely a typo.
  for (const k of Object.keys(env)) {
    if (!isOAuthProviderKey(k) || get(k) === undefined) continue;
    const name = k.slice('OAUTH_'.length).replace(/_(ISSUER|CLIENT_ID|CLIENT_SECRET|LABEL)$/, '').toLowerCase();
    if (!names.includes(name)) problems.push(`${k} is set but OAUTH_PROVIDERS does not name "${name}"`);
  }
  return out;
}

function issuerProblem(key: string, issuer: string, allowInsecure: boolean, problems: string[]): boolean {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    problems.push(`${key} is not a URL: "${issuer}"`);
    return true;
  }
  if (url.search || url.hash) {
    problems.push(`${key} must not carry a query or fragment`);
    return true;
  }
  if (url.protocol === 'https:') return false;
  if (url.protocol === 'http:' && allowInsecure) return false;
  problems.push(`${key} must be an https: URL (http: only with OUTBOUND_ALLOW_LOOPBACK=true, for development), got "${issuer}"`);
  return true;
}
