/**
 * The agent's proof at /oidc/authorize (decisions §12, §18): header `X-Service-Agent` (or
 * `X-AuthYourAgent-Agent`) holding an agent JWT (verified as every agent JWT is, against the agent's
 * own key) with `htu` = the authorize URL as requested, a one-time `jti` and at most 60 s of life.
 */
import type { AgentRecord } from '../../store/ports/index.ts';
import { verifyAgentJwt } from '../agents/agent-jwt.ts';
import { seconds } from '../../clock.ts';
import { unauthorized } from '../errors.ts';
import { AGENT_HEADER_MAX_LIFETIME_SEC, type OidcDeps } from './deps.ts';

const JTI_NAMESPACE = 'oidc-agent-jti';

const refused = (why: string) => unauthorized(`X-Service-Agent refused: ${why}`, {
  next_step: `send header X-Service-Agent: an agent JWT (ES256, iss = sub = agent id, type "agent") with htu = the full authorize URL as you request it, a fresh jti, and exp at most ${AGENT_HEADER_MAX_LIFETIME_SEC} s after iat`,
});

/** What the request was: the htu must name it. */
export type RequestedUrl =
  | { method: 'GET'; url: URL }
  /** POST: the endpoint, with the form's parameters as the htu's query. */
  | { method: 'POST'; url: URL; form: [string, string][] };

/** The claims, read before verification only to find the agent (verifyAgentJwt checks the signature). */
function unverifiedClaims(token: string): Record<string, unknown> | undefined {
  const part = token.split('.')[1];
  if (part === undefined) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
    return claims !== null && typeof claims === 'object' && !Array.isArray(claims) ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const sortedEntries = (e: Iterable<[string, string]>): string => JSON.stringify([...e].sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0) : a[0] < b[0] ? -1 : 1)));

/** Scheme, host and port compared after the URL parser's normalisation; path and query as sent. */
function htuMatches(htu: string, requested: RequestedUrl): boolean {
  let u: URL;
  try {
    u = new URL(htu);
  } catch {
    return false;
  }
  const r = requested.url;
  if (u.protocol !== r.protocol || u.host !== r.host || u.username !== '' || u.password !== '') return false;
  if (requested.method === 'GET') return u.pathname === r.pathname && u.search === r.search;
  return u.pathname === r.pathname && sortedEntries(u.searchParams.entries()) === sortedEntries(requested.form);
}

export async function verifyAgentHeader(d: OidcDeps, header: string | undefined, requested: RequestedUrl): Promise<AgentRecord> {
  if (header === undefined || header === '') throw refused('missing');
  const claims = unverifiedClaims(header);
  if (!claims || typeof claims.iss !== 'string') throw refused('not an agent JWT');
  const agent = await verifyAgentJwt(d.store.agents, d.clock, header, claims.iss);
  const { iat, exp, htu, jti } = claims;
  if (typeof iat !== 'number' || typeof exp !== 'number' || exp - iat > AGENT_HEADER_MAX_LIFETIME_SEC) throw refused(`exp must be at most ${AGENT_HEADER_MAX_LIFETIME_SEC} s after iat`);
  if (typeof htu !== 'string' || !htuMatches(htu, requested)) throw refused('htu must be the full authorize URL as requested (with its query exactly as sent)');
  if (typeof jti !== 'string' || jti.length < 8 || jti.length > 200) throw refused('jti must be a fresh random string (8 to 200 characters)');
  const now = d.clock.now();
  const keep = Math.max(exp * 1000, now) + 60_000;
  if (!(await d.store.singleUse.consume(JTI_NAMESPACE, `${agent.id}:${jti}`, keep, now))) throw refused('this jti was used already (a replayed header)');
  if (exp <= seconds(now)) throw refused('expired');
  return agent;
}
