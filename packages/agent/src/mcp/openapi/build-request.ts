import { type SiteToolRequest, ToolArgumentError } from '../site-tool.ts';
import { type ArgumentPlan, BODY_ARGUMENT } from './input-schema.ts';
import type { Parameter } from './operations.ts';

/** decisions §27: request bodies of site calls are at most 1 MB. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The HTTP request for arguments already checked against the tool's schema: path parameters
 * percent-encoded into the template, query parameters in OpenAPI's default styles, the JSON body.
 */
export function buildRequest(method: string, base: URL, pathTemplate: string, plan: ArgumentPlan, args: Record<string, unknown>): SiteToolRequest {
  const path = pathTemplate.replace(/\{([^}]*)\}/g, (_, name: string) => pathValue(name, args[name]));
  const query = new URLSearchParams();
  for (const p of plan.query) if (args[p.name] !== undefined) addQuery(query, p, args[p.name]);
  const search = query.size > 0 ? `?${query.toString()}` : '';
  const url = `${base.origin}${base.pathname.replace(/\/+$/, '')}${path}${search}`;

  const body = bodyOf(plan, args);
  if (body === undefined) return { url, method, headers: {} };
  const serialized = JSON.stringify(body);
  if (Buffer.byteLength(serialized) > MAX_BODY_BYTES) throw new ToolArgumentError(BODY_ARGUMENT, `is larger than ${MAX_BODY_BYTES / 1024 / 1024} MB`);
  return { url, method, headers: { 'content-type': plan.body?.contentType ?? 'application/json' }, body: serialized };
}

// One path segment: every character that could end it or change its meaning is encoded, and a
// value that is a dot segment is refused (the URL parser would turn /orders/.. into /).
function pathValue(name: string, value: unknown): string {
  const parts = Array.isArray(value) ? value.map(scalar) : [scalar(value)];
  const text = parts.join(',');
  if (text === '' || text === '.' || text === '..') throw new ToolArgumentError(name, 'must not be empty, "." or ".."');
  return parts.map(encodeURIComponent).join(',');
}

function addQuery(query: URLSearchParams, p: Parameter, value: unknown): void {
  const style = p.style ?? 'form';
  const explode = p.explode ?? style === 'form';
  if (Array.isArray(value)) {
    const separator = style === 'spaceDelimited' ? ' ' : style === 'pipeDelimited' ? '|' : ',';
    if (explode) for (const v of value) query.append(p.name, scalar(v));
    else query.append(p.name, value.map(scalar).join(separator));
  } else if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    if (style === 'deepObject') for (const [k, v] of entries) query.append(`${p.name}[${k}]`, scalar(v));
    else if (explode) for (const [k, v] of entries) query.append(k, scalar(v));
    else query.append(p.name, entries.flatMap(([k, v]) => [k, scalar(v)]).join(','));
  } else {
    query.append(p.name, scalar(value));
  }
}

function scalar(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function bodyOf(plan: ArgumentPlan, args: Record<string, unknown>): unknown {
  const b = plan.body;
  if (b === undefined) return undefined;
  if (b.merged === undefined) return args[BODY_ARGUMENT];
  const fields = Object.fromEntries(b.merged.filter((k) => args[k] !== undefined).map((k) => [k, args[k]]));
  return b.required || Object.keys(fields).length > 0 ? fields : undefined;
}
