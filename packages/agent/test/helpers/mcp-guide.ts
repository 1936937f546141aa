import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../../server/test/helpers/child-process.ts';

/**
 * Reading docs/agents/mcp.md as a reader's host would: the server entries of its JSON configs, the
 * command of its `claude mcp add` lines, and its table of tools.
 */

/** A stdio server as hosts describe it: what to start, with which environment. */
export interface StdioEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** An HTTP server as hosts describe it: where, with which headers. */
export interface HttpEntry {
  url: string;
  headers: Record<string, string>;
}

/** The one server entry of a host's JSON config (`mcpServers` of Claude Desktop, `servers` of VS Code). */
export function configEntry(json: string): Record<string, unknown> {
  const config = JSON.parse(json) as Record<string, unknown>;
  const servers = (config['mcpServers'] ?? config['servers']) as Record<string, Record<string, unknown>> | undefined;
  assert.ok(servers, 'a config with mcpServers or servers');
  const entries = Object.values(servers);
  assert.equal(entries.length, 1, 'one server in the config');
  return entries[0] ?? {};
}

export function stdioEntry(entry: Record<string, unknown>): StdioEntry {
  assert.ok(entry['type'] === undefined || entry['type'] === 'stdio', `a stdio entry, not ${String(entry['type'])}`);
  assert.equal(typeof entry['command'], 'string');
  return { command: String(entry['command']), args: (entry['args'] as string[] | undefined) ?? [], env: (entry['env'] as Record<string, string> | undefined) ?? {} };
}

export function httpEntry(entry: Record<string, unknown>): HttpEntry {
  assert.equal(entry['type'], 'http');
  return { url: String(entry['url']), headers: (entry['headers'] as Record<string, string> | undefined) ?? {} };
}

/** The words of a one-line shell command, with "double" and 'single' quotes taken off (no escapes, no variables). */
export function shellWords(line: string): string[] {
  return [...line.trim().matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

/**
 * `claude mcp add [options] <name> -- <command> [args...]` (stdio) or
 * `claude mcp add --transport http [options] <name> <url>`: the server it adds.
 */
export function claudeMcpAdd(line: string): { name: string; stdio?: StdioEntry; http?: HttpEntry } {
  const words = shellWords(line);
  assert.deepEqual(words.slice(0, 3), ['claude', 'mcp', 'add']);
  const dashes = words.indexOf('--');
  const options = words.slice(3, dashes < 0 ? undefined : dashes);
  const env: Record<string, string> = {};
  const headers: Record<string, string> = {};
  let transport = 'stdio';
  const positional: string[] = [];
  for (let i = 0; i < options.length; i++) {
    const word = options[i] ?? '';
    const value = options[i + 1] ?? '';
    if (word === '--transport') transport = value;
    else if (word === '--env' || word === '-e') env[value.slice(0, value.indexOf('='))] = value.slice(value.indexOf('=') + 1);
    else if (word === '--header' || word === '-H') headers[value.slice(0, value.indexOf(':'))] = value.slice(value.indexOf(':') + 1).trim();
    else if (word === '--scope' || word === '-s') { /* where Claude Code keeps it */ }
    else {
      positional.push(word);
      continue;
    }
    i += 1;
  }
  const name = positional[0] ?? '';
  if (transport === 'http') return { name, http: { url: positional[1] ?? '', headers } };
  assert.equal(transport, 'stdio');
  assert.ok(dashes > 0, 'a stdio server after --');
  const [command = '', ...args] = words.slice(dashes + 1);
  return { name, stdio: { command, args, env } };
}

/** A row of the guide's table of tools: the name, and its inputs (`?`: optional). */
export interface DocumentedTool {
  name: string;
  required: string[];
  optional: string[];
}

/** The table after `<!-- tools: <name> -->` in `guide`. */
export function documentedTools(guide: string, name: string): DocumentedTool[] {
  const text = readFileSync(join(REPO_ROOT, guide), 'utf8');
  const table = new RegExp(`<!-- tools: ${name} -->\\n((?:\\|.*\\n)+)`).exec(text)?.[1];
  assert.ok(table, `${guide}: no table after <!-- tools: ${name} -->`);
  return table.split('\n').slice(2).filter(Boolean).map((row) => {
    const [, tool = '', inputs = ''] = row.split('|').map((c) => c.trim());
    const fields = [...inputs.matchAll(/`([a-z_]+)(\??)`/g)];
    return {
      name: tool.replace(/`/g, ''),
      required: fields.filter((f) => f[2] === '').map((f) => f[1] ?? ''),
      optional: fields.filter((f) => f[2] === '?').map((f) => f[1] ?? ''),
    };
  });
}
