import { existsSync } from 'node:fs';
import { normalizeServiceUrl } from '../client/http.ts';
import { AgentKey } from '../keys/agent-key.ts';
import { keyFilePath, loadKeyFile, saveKeyFile, type KeyFileContents } from '../keys/key-file.ts';
import type { CliContext, OptionValues } from './command.ts';
import { UsageError } from './exit-codes.ts';
import { str } from './values.ts';

export type PreparedKey = {
  contents: KeyFileContents;
  jkt: string;
  /** One line saying where the key is and whether it was just made. */
  where: string;
};

/** `--service`, else MANDATE_URL, else `fallback` (the URL an unregistered key already names). */
export function serviceUrlFrom(ctx: CliContext, values: OptionValues, command: string, fallback?: string): string {
  const raw = str(values, 'service') || ctx.env['MANDATE_URL'] || fallback;
  if (!raw) throw new UsageError('--service is required (or set MANDATE_URL)', command);
  let url: string;
  try {
    url = normalizeServiceUrl(raw);
  } catch (e) {
    throw new UsageError((e as Error).message, command);
  }
  if (isPlainHttpToAnotherHost(url)) ctx.out.note(`warning: ${url} is plain http; use https for a service that is not on this machine`);
  return url;
}

/** The unregistered key the directory already holds, if any (a registered one is refused). */
export function unregisteredKey(ctx: CliContext, command: string): KeyFileContents | undefined {
  if (!existsSync(keyFilePath(ctx.dir))) return undefined;
  const existing = loadKeyFile(ctx.dir);
  if (existing.agentId) throw new UsageError(`${ctx.dir} already holds the key of agent ${existing.agentId}; use another --dir for another agent`, command);
  return existing;
}

/**
 * Makes the agent key (key.json, mode 600, in a directory of mode 700), or reuses the unregistered
 * key already there (after a failed attempt), and records the service URL and name with it.
 */
export async function prepareKey(ctx: CliContext, serviceUrl: string, name: string | null, command: string): Promise<PreparedKey> {
  const existing = unregisteredKey(ctx, command);
  const contents: KeyFileContents = existing
    ? { ...existing, serviceUrl, name: name ?? existing.name }
    : { serviceUrl, agentId: null, name, key: await AgentKey.generate(), createdAt: new Date().toISOString() };
  saveKeyFile(ctx.dir, contents);
  const jkt = await contents.key.thumbprint();
  const where = `${existing ? 'Using the unregistered agent key' : 'Created a new agent key'} in ${ctx.dir} (key.json, mode 600)`;
  return { contents, jkt, where };
}

function isPlainHttpToAnotherHost(url: string): boolean {
  const u = new URL(url);
  return u.protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
}
