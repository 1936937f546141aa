import { ToolArgumentError } from './site-tool.ts';

/**
 * Headers the model may not set on a site call: they carry the agent's credentials, which this
 * process adds itself (the pass, its DPoP proof, a step-up token, Web Bot Auth signatures, the
 * agent's sign-in JWT) or a browser's (cookies). `X-Service-*` and `X-AuthYourAgent-*` are the
 * protocol's own headers (X-Service-Stepup, X-Service-Agent and their legacy twins).
 */
const FORBIDDEN = new Set(['authorization', 'proxy-authorization', 'dpop', 'cookie', 'signature', 'signature-input', 'signature-agent', 'host']);
const FORBIDDEN_PREFIXES = ['x-service-', 'x-authyouragent-'];

/** The model's headers as `Headers`; a forbidden or malformed one is a `ToolArgumentError` naming it. */
export function guardedHeaders(raw: Record<string, string> | undefined, field = 'headers'): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw ?? {})) {
    const lower = name.toLowerCase();
    if (FORBIDDEN.has(lower) || FORBIDDEN_PREFIXES.some((p) => lower.startsWith(p))) {
      throw new ToolArgumentError(`${field}.${name}`, `the ${name} header may not be set: Mandate adds the agent's credentials itself, and they never pass through the model`);
    }
    try {
      headers.set(name, value);
    } catch {
      throw new ToolArgumentError(`${field}.${name}`, 'not a valid HTTP header name or value');
    }
  }
  return headers;
}
