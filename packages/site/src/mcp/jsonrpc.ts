import type { McpToolConfig } from './options.ts';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The tool a JSON-RPC message calls, when it is a `tools/call` naming one. */
export function calledTool(message: unknown): string | undefined {
  if (!isRecord(message) || message['method'] !== 'tools/call') return undefined;
  const params = message['params'];
  const name = isRecord(params) ? params['name'] : undefined;
  return typeof name === 'string' ? name : undefined;
}

/**
 * The scopes a POSTed body needs: those of every tool it calls (a batch is an array of messages, so
 * each one counts). Other messages (initialize, tools/list, notifications, answers) need none.
 */
export function scopesNeeded(body: unknown, tools: ReadonlyMap<string, McpToolConfig>): string[] {
  const needed = new Set<string>();
  for (const message of Array.isArray(body) ? body : [body]) {
    const name = calledTool(message);
    const rule = name === undefined ? undefined : tools.get(name);
    for (const s of rule?.scopes ?? []) needed.add(s);
  }
  return [...needed];
}
