import { isValidScopeList } from '@mandate/protocol';
import type { McpDeps } from './context.ts';
import { ToolFailure } from './results.ts';
import { readSiteAnswer } from './site-response.ts';

/**
 * The agent holds a grant on a site, but without a scope a call needs. The service files no second
 * access request while a grant lives (409), so the only way on is for the owner to revoke that
 * access and approve a new request with every scope: a tool error that names the scopes granted
 * and needed, and says exactly that.
 */
export function missingScope(code: string, site: string, granted: readonly string[] | undefined, needed: readonly string[] | undefined, why: string): ToolFailure {
  const has = granted ? `has the scopes ${quoted(granted)}` : 'lacks a scope this call needs';
  const lacks = needed ? `; ${needed.length === 1 ? 'this needs the scope' : 'this needs the scopes'} ${quoted(needed)}` : '';
  const ask = granted && needed ? JSON.stringify({ site, scopes: [...new Set([...granted, ...needed])] }) : `{"site": "${site}", "scopes": [the scopes granted and the one needed]}`;
  return new ToolFailure(
    code,
    `${why}: the agent's access to ${site} ${has}${lacks}`,
    `while this access lives the service files no second access request for ${site}: ask the owner (mandate_notify_owner can) to revoke this agent's access to ${site} in the Mandate app (Access, "Revoke access"), then call mandate_request_access with ${ask}`,
    { site, ...(granted ? { scopes_granted: [...granted] } : {}), ...(needed ? { scopes_needed: [...needed] } : {}) },
  );
}

/** The scopes of the agent's grant on the site, as its pass says; undefined when no pass can be had. */
async function grantedScopes(d: McpDeps, site: string): Promise<string[] | undefined> {
  try {
    return (await d.agent.pass(site, { signal: d.shutdown })).scope;
  } catch {
    return undefined; // the refusal is reported all the same, without the scopes
  }
}

/**
 * A site's `403 insufficient_scope` (site rule 2) as a `missingScope` failure. The scope needed is
 * the one the site names (a `scope` field of its JSON body, or the `scope` of an RFC 6750
 * `WWW-Authenticate`), else the tool's own (an OpenAPI operation's scopes); the site's words go along.
 */
export async function siteScopeRefusal(d: McpDeps, site: string, request: string, res: Response, toolScopes: readonly string[] | undefined): Promise<ToolFailure> {
  const answer = await readSiteAnswer(res);
  const body = jsonObject(answer.body);
  const named = scopesOf(body?.['scope']) ?? scopesOf(/\bscope="([^"]*)"/i.exec(res.headers.get('www-authenticate') ?? '')?.[1]);
  const said = [body?.['error_description'], body?.['detail'], body?.['message']].find((v): v is string => typeof v === 'string' && v.length > 0);
  const why = `${site} refused ${request} for want of a scope${said ? ` (the site said: ${JSON.stringify(said.slice(0, 300))})` : ''}`;
  return missingScope('insufficient_scope', site, await grantedScopes(d, site), named ?? (toolScopes?.length ? toolScopes : undefined), why);
}

function scopesOf(v: unknown): string[] | undefined {
  const list = typeof v === 'string' ? v.split(/\s+/).filter(Boolean) : Array.isArray(v) ? v : undefined;
  return list && isValidScopeList(list) ? list : undefined;
}

function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function quoted(scopes: readonly string[]): string {
  return scopes.map((s) => `"${s}"`).join(', ');
}
