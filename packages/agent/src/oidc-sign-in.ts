import { randomBytes } from 'node:crypto';
import { createAgentJwt, type PrivateKey } from '@mandate/protocol';
import { InvalidInputError } from './client/errors.ts';
import { parseHttpUrl } from './http-url.ts';

/**
 * The agent's proof when it signs in at a site with OpenID Connect (decisions §12, §18): a site sends
 * the agent to Mandate's `/oidc/authorize`, and the agent requests that address with header
 * `X-Service-Agent`, an agent JWT with `htu` = the address exactly as it will be requested, a fresh
 * random `jti` (the service takes each once) and 60 s of life. One header per request: make a new
 * one for every authorize call, never reuse it.
 */

/** The longest life the service accepts for this header. */
export const OIDC_AGENT_HEADER_LIFETIME_SEC = 60;

/** `{ 'X-Service-Agent': jwt }` for one request to the authorize address `url` (http or https). */
export async function oidcAuthorizeHeaders(privateKey: PrivateKey, agentId: string, url: string | URL): Promise<{ 'X-Service-Agent': string }> {
  const htu = typeof url === 'string' ? url : url.href;
  parseHttpUrl(htu, 'the authorize address must be an http(s) URL', (m) => new InvalidInputError(m));
  const jwt = await createAgentJwt(privateKey, agentId, { htu, jti: randomBytes(16).toString('base64url'), lifetimeSec: OIDC_AGENT_HEADER_LIFETIME_SEC });
  return { 'X-Service-Agent': jwt };
}
