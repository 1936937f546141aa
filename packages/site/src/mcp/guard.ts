import type { ResourceTokenScheme } from '@mandate/protocol';
import { publicUrl } from '../public-url.ts';
import { MAX_TOKEN_LENGTH, header } from '../request.ts';
import { refusalFor } from '../results.ts';
import type { MandateRequest } from '../types.ts';
import { wwwAuthenticate } from './challenge.ts';
import { scopesNeeded } from './jsonrpc.ts';
import { metadataOf, metadataPaths, metadataUrl } from './metadata.ts';
import type { McpConfig } from './options.ts';
import type { ResourceVerifier } from './resource-verify.ts';

/** What a tool handler finds in `extra.authInfo.extra`. */
export type McpAuthExtra = {
  agentId: string;
  /** Cloud mode only. */
  agentName?: string;
  /** The owner's stable id, the same at every site. */
  userId: string;
  grantId: string;
  /** Approved fields (`user:name`, `user:email`, `user:phone`); `{}` when none. */
  userInfo: Record<string, string>;
  /** True when the pass is DPoP-bound. */
  bound: boolean;
};

/**
 * The MCP SDK's `AuthInfo` as `mcpAuth` fills it (set on `req.auth`, so tool handlers get it as
 * `extra.authInfo`). Structurally the SDK's type: no dependency on the SDK is needed.
 */
export type McpAuthInfo = {
  token: string;
  clientId: string;
  scopes: string[];
  /** Unix seconds. */
  expiresAt: number;
  resource: URL;
  extra: McpAuthExtra;
};

/** An answer the adapters send as is: status, headers and a JSON body. */
export type McpAnswer = { status: number; headers: Record<string, string>; body: unknown };

export type McpAuthResult = { ok: true; auth: McpAuthInfo } | { ok: false; answer: McpAnswer };

const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

const json = (status: number, body: unknown, headers: Record<string, string> = {}): McpAnswer => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  body,
});

/** The path of a request target, without its query (`*` and garbage give ''). */
export function pathOf(target: string): string {
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  return path.startsWith('/') ? path : '';
}

/**
 * The mode-independent part of `mcpAuth`: metadata, challenges, the pass's header, and the scope
 * check of a body. Every answer is built here, so node:http, Express and Fastify answer alike.
 */
export class McpGuard {
  readonly metadataPaths: readonly string[];
  readonly metadataUrl: string;
  private readonly metadataAnswer: McpAnswer;

  constructor(
    private readonly config: McpConfig,
    private readonly verifier: ResourceVerifier,
  ) {
    this.metadataPaths = metadataPaths(config);
    this.metadataUrl = metadataUrl(config);
    // Public and the same for everyone: browsers' MCP clients may read it from another origin.
    this.metadataAnswer = json(200, metadataOf(config), { 'cache-control': 'public, max-age=3600', 'access-control-allow-origin': '*' });
  }

  /** The metadata answer for a GET (or HEAD) of one of its paths; undefined for every other request. */
  metadata(method: string | undefined, target: string): McpAnswer | undefined {
    if (method !== 'GET' && method !== 'HEAD') return undefined;
    return this.metadataPaths.includes(pathOf(target)) ? this.metadataAnswer : undefined;
  }

  private challenge(status: number, error: string | undefined, description: string | undefined, scopes?: string[]): McpAnswer {
    const www = wwwAuthenticate({
      resourceMetadata: this.metadataUrl,
      scopes: scopes ?? this.config.challengeScopes,
      ...(error === 'invalid_token' || error === 'insufficient_scope' || error === 'invalid_request' ? { error } : {}),
      ...(description === undefined ? {} : { description }),
    });
    const body = error === undefined ? { error: 'unauthorized', error_description: description } : { error, error_description: description };
    return json(status, body, { 'www-authenticate': www });
  }

  private invalidToken(code: string, description: string): McpAnswer {
    const answer = this.challenge(401, 'invalid_token', description);
    return { ...answer, body: { error: code, error_description: description } };
  }

  /** The pass of a request, verified for this resource; otherwise the 401 (or 400, 503) to send. */
  async authenticate(request: MandateRequest): Promise<McpAuthResult> {
    const authorization = header(request.headers, 'authorization');
    if (authorization.kind === 'many') return { ok: false, answer: this.challenge(400, 'invalid_request', 'send exactly one Authorization header') };
    const m = authorization.kind === 'one' ? /^(bearer|dpop) +(\S+)$/i.exec(authorization.value) : null;
    // No pass (or another scheme): the bare challenge, from which MCP clients start their authorization.
    if (m === null || m[1] === undefined || m[2] === undefined) {
      return { ok: false, answer: this.challenge(401, undefined, 'this MCP server needs a Mandate pass: see resource_metadata') };
    }
    const scheme: ResourceTokenScheme = m[1].toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer';
    const accessToken = m[2];
    if (accessToken.length > MAX_TOKEN_LENGTH || !TOKEN68.test(accessToken)) return { ok: false, answer: this.invalidToken('invalid_token', 'the access token is malformed or too long') };
    const dpop = header(request.headers, 'dpop');
    if (dpop.kind === 'many') return { ok: false, answer: this.invalidToken('invalid_dpop', 'send exactly one DPoP proof') };
    if (dpop.kind === 'one' && dpop.value.length > MAX_TOKEN_LENGTH) return { ok: false, answer: this.invalidToken('invalid_dpop', 'the DPoP proof is too long') };
    const url = publicUrl(request, this.config.verifier);
    if (!url.ok) return { ok: false, answer: json(400, { error: 'invalid_request', error_description: url.description }) };
    if (typeof request.method !== 'string' || !/^[A-Za-z]{1,16}$/.test(request.method)) {
      return { ok: false, answer: json(400, { error: 'invalid_request', error_description: 'the request method is malformed' }) };
    }

    try {
      const v = await this.verifier.verify({ accessToken, scheme, dpop: dpop.kind === 'one' ? dpop.value : undefined, method: request.method, url: url.url });
      const extra: McpAuthExtra = { agentId: v.agentId, userId: v.userId, grantId: v.grantId, userInfo: v.userInfo, bound: v.bound };
      if (v.agentName !== undefined) extra.agentName = v.agentName;
      const auth: McpAuthInfo = { token: accessToken, clientId: v.clientId, scopes: v.scopes, expiresAt: v.expiresAt, resource: new URL(this.config.resource), extra };
      return { ok: true, auth };
    } catch (e) {
      const refused = refusalFor(e, this.config.verifier.onError);
      if (refused.status === 401) return { ok: false, answer: this.invalidToken(refused.error, refused.description) };
      return { ok: false, answer: json(refused.status, { error: refused.error, error_description: refused.description }, refused.status === 503 ? { 'retry-after': '5' } : {}) };
    }
  }

  /**
   * For a POSTed JSON-RPC body: the 403 when a tool it calls needs a scope the pass lacks (MCP's step-up
   * by scope). The challenge names the scopes the pass holds besides the ones the call needs: clients that
   * replace their scope with the challenge's (the MCP SDKs of 2025-11-25, whose spec asked servers for
   * this) would otherwise trade the tools they could use for this one; clients that add the challenge's
   * scopes to theirs (MCP 2026-07-28) end up with the same set.
   */
  authorize(auth: McpAuthInfo, body: unknown): McpAnswer | undefined {
    const needed = scopesNeeded(body, this.config.tools);
    const missing = needed.filter((s) => !auth.scopes.includes(s));
    if (missing.length === 0) return undefined;
    const ask = [...new Set([...auth.scopes, ...needed])];
    return this.challenge(403, 'insufficient_scope', `this call needs the scope ${missing.join(' ')}`, ask);
  }

  /** The answer to a POST whose body could not be read. */
  badBody(why: 'too_large' | 'not_json'): McpAnswer {
    return why === 'too_large'
      ? json(413, { error: 'invalid_request', error_description: 'the body is larger than 1 MiB' }, { connection: 'close' })
      : json(400, { error: 'invalid_request', error_description: 'the body is not JSON' });
  }
}
