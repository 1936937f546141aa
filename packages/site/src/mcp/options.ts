import { isValidAction } from '@mandate/protocol';
import { type VerifierConfig, type VerifierOptions, parseOptions } from '../config.ts';
import type { Mode } from '../types.ts';
import { checkScope } from '../verifier.ts';

/** What one tool of the MCP server needs (decisions §28). */
export type McpToolRule = {
  /** Scopes the pass must carry for a `tools/call` of this tool; missing: 403 `insufficient_scope` naming them. */
  scopes?: string[];
  /** The owner approves each call on their phone first (use `withApproval` in the tool's handler). */
  approval?: boolean;
  /** The text on the owner's approval card for these arguments (1 to 500 printable characters). Default: `name(arg: value, …)`. */
  summary?: (args: Record<string, unknown>) => string;
};

/** The options that mean for `mcpAuth` what they mean for `createVerifier` (local mode's, and the transport's). */
type SharedVerifierOptions = Pick<VerifierOptions, 'issuer' | 'revocation' | 'revTtlSec' | 'maxStaleSec' | 'jwksMinRefreshSec' | 'replayCache' | 'fetch' | 'now'>;

/** Options of `mcpAuth`. Only `service`, `resource` and `scopes` are required. */
export type McpAuthOptions = SharedVerifierOptions & {
  /** Where this server reaches Mandate, e.g. `https://mandate.example`: also the authorization server named in the metadata. */
  service: string;
  /**
   * This MCP server's resource identifier (RFC 8707, RFC 9728): the URL clients connect to, e.g.
   * `https://mcp.example/mcp`. Passes are accepted only when their `aud` is exactly this URL.
   */
  resource: string;
  /** The scopes this server asks for: `scopes_supported` (with the tools' scopes) and the `scope` of the 401 challenge. */
  scopes: string[];
  /** Per-tool needs, by tool name. A tool not listed needs no scope beyond a valid pass, and no approval. */
  tools?: Record<string, McpToolRule>;
  /** `cloud` (default): Mandate checks each pass. `local`: checked here with Mandate's keys and revocation list. */
  mode?: Mode;
  /** `resource_name` in the metadata, shown by clients. Default: the resource's host. */
  resourceName?: string;
  /**
   * How clients reach this server (a path prefix is kept): the URL each DPoP proof signs is this plus
   * the request path. Default: the origin of `resource`.
   */
  publicBaseUrl?: string;
  /** Trust X-Forwarded-Host / -Proto; only with `publicBaseUrl` set to '' (build the URL from headers). Default false. */
  trustForwardedHeaders?: boolean;
  /** Timeout of each call to Mandate (a long poll adds its wait). Default 5000 ms. */
  timeoutMs?: number;
  /** Told about failures that cost a verdict. Default: console.warn. Never given token bytes. */
  onError?: (error: Error) => void;
  /** Approval tools: how long one call waits for the owner (seconds, 1 to 25, default 25), and how long each long poll lasts (default 5). */
  approvalWaitSec?: number;
  approvalPollSec?: number;
};

export type McpToolConfig = { scopes: string[]; approval: boolean; summary: ((args: Record<string, unknown>) => string) | undefined };

export type McpConfig = {
  verifier: VerifierConfig;
  resource: string;
  resourceUrl: URL;
  resourceName: string;
  /** Every scope the resource names: its own, then the tools'. */
  scopesSupported: string[];
  challengeScopes: string[];
  tools: Map<string, McpToolConfig>;
  approvalWaitSec: number;
  approvalPollSec: number;
};

function scopeList(name: string, value: unknown): string[] {
  if (!Array.isArray(value)) throw new TypeError(`${name} must be an array of scopes`);
  for (const s of value) {
    if (typeof s !== 'string') throw new TypeError(`${name} must be an array of scopes`);
    checkScope(s);
  }
  return [...new Set(value as string[])];
}

function seconds(name: string, value: number | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) throw new TypeError(`${name} must be a whole number from 1 to ${max}`);
  return value;
}

/**
 * The resource identifier as clients and Mandate spell it: the WHATWG serialisation (`https://mcp.example`
 * becomes `https://mcp.example/`), which is what the MCP SDKs send as `resource` and so what the pass's `aud` holds.
 */
function resourceOf(value: unknown): URL {
  if (typeof value !== 'string' || value === '') throw new TypeError('resource is required: the URL of this MCP server, e.g. https://mcp.example/mcp');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`resource is not a URL: ${value}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError('resource must be an https URL (http only for local development)');
  if (url.hash !== '' || value.includes('#') || url.search !== '' || url.username !== '' || url.password !== '') {
    throw new TypeError('resource must not carry a fragment, query or credentials (RFC 8707)');
  }
  return url;
}

/** Validates the options once, at start-up: a misconfigured server throws here, not per request. */
export function parseMcpOptions(o: McpAuthOptions): McpConfig {
  if (typeof o !== 'object' || o === null) throw new TypeError('mcpAuth needs options {service, resource, scopes}');
  const resourceUrl = resourceOf(o.resource);
  const scopes = scopeList('scopes', o.scopes);
  const tools = new Map<string, McpToolConfig>();
  for (const [name, rule] of Object.entries(o.tools ?? {})) {
    if (typeof rule !== 'object' || rule === null) throw new TypeError(`tools.${name} must be an object`);
    const approval = rule.approval === true;
    // The tool's name is the step-up action the owner reads; MCP's tool names always qualify, but a name with
    // characters an action cannot hold would be refused by Mandate on every call: found here instead.
    if (approval && !isValidAction(name)) throw new TypeError(`tools.${name}: a tool that needs approval must have a name of 1 to 200 printable characters`);
    if (rule.summary !== undefined && typeof rule.summary !== 'function') throw new TypeError(`tools.${name}.summary must be a function of the arguments`);
    tools.set(name, { scopes: scopeList(`tools.${name}.scopes`, rule.scopes ?? []), approval, summary: rule.summary });
  }
  const mode = o.mode ?? 'cloud';
  const publicBaseUrl = o.publicBaseUrl ?? resourceUrl.origin;
  const verifier = parseOptions({
    mode,
    serviceUrl: o.service,
    site: resourceUrl.host,
    ...(publicBaseUrl === '' ? {} : { publicBaseUrl }),
    ...(o.trustForwardedHeaders === undefined ? {} : { trustForwardedHeaders: o.trustForwardedHeaders }),
    ...(o.issuer === undefined ? {} : { issuer: o.issuer }),
    ...(o.revocation === undefined ? {} : { revocation: o.revocation }),
    ...(o.revTtlSec === undefined ? {} : { revTtlSec: o.revTtlSec }),
    ...(o.maxStaleSec === undefined ? {} : { maxStaleSec: o.maxStaleSec }),
    ...(o.jwksMinRefreshSec === undefined ? {} : { jwksMinRefreshSec: o.jwksMinRefreshSec }),
    ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }),
    ...(o.fetch === undefined ? {} : { fetch: o.fetch }),
    ...(o.now === undefined ? {} : { now: o.now }),
    ...(o.onError === undefined ? {} : { onError: o.onError }),
  });
  const toolScopes = [...tools.values()].flatMap((t) => t.scopes);
  if (o.resourceName !== undefined && (typeof o.resourceName !== 'string' || o.resourceName.trim() === '')) throw new TypeError('resourceName must be a non-empty string');
  const approvalWaitSec = seconds('approvalWaitSec', o.approvalWaitSec, 25, 25);
  return {
    verifier,
    resource: resourceUrl.href,
    resourceUrl,
    resourceName: o.resourceName ?? resourceUrl.host,
    scopesSupported: [...new Set([...scopes, ...toolScopes])],
    challengeScopes: scopes,
    tools,
    approvalWaitSec,
    approvalPollSec: Math.min(approvalWaitSec, seconds('approvalPollSec', o.approvalPollSec, 5, 25)),
  };
}
