import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { KeyFileError } from '../client/errors.ts';
import { normalizeServiceUrl } from '../client/http.ts';
import { AgentKey } from './agent-key.ts';
import { readPrivateFile, writePrivateFileAtomic } from './secure-fs.ts';

/**
 * The agent directory (default `~/.mandate-agent`, or `MANDATE_AGENT_DIR`) holds `key.json`: the
 * private key, the agent id once the owner registered the key, and the service URL.
 */

export type KeyFileContents = {
  serviceUrl: string;
  /** Null until the owner registered the key and the id was recorded (`init --email` or `set-id`). */
  agentId: string | null;
  name: string | null;
  key: AgentKey;
  createdAt: string;
};

const AGENT_ID = /^ag_[a-z0-9_]{1,61}$/;

export function isAgentId(value: string): boolean {
  return AGENT_ID.test(value);
}

export function defaultAgentDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env['MANDATE_AGENT_DIR'] || join(homedir(), '.mandate-agent'));
}

export const keyFilePath = (dir: string): string => join(dir, 'key.json');

/** Reads and checks `key.json`; `KeyFileError` saying what to do when it is missing, open to others or malformed. */
export function loadKeyFile(dir: string): KeyFileContents {
  const file = keyFilePath(dir);
  const text = readPrivateFile(file);
  if (text === undefined) throw new KeyFileError(`no agent key in ${dir}`, 'run: mandate-agent init --service URL --name NAME (or pass --dir / set MANDATE_AGENT_DIR)');
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new KeyFileError(`${file} is not valid JSON`);
  }
  if (typeof raw !== 'object' || raw === null || raw['version'] !== 1) throw new KeyFileError(`${file} is not a mandate-agent key file (version 1)`);
  const serviceUrl = raw['service_url'];
  const agentId = raw['agent_id'] ?? null;
  const name = raw['name'] ?? null;
  if (typeof serviceUrl !== 'string') throw new KeyFileError(`${file}: service_url is missing`);
  if (agentId !== null && (typeof agentId !== 'string' || !isAgentId(agentId))) throw new KeyFileError(`${file}: agent_id is not an agent id (ag_...)`);
  if (name !== null && typeof name !== 'string') throw new KeyFileError(`${file}: name must be a string`);
  let url: string;
  try {
    url = normalizeServiceUrl(serviceUrl);
  } catch (e) {
    throw new KeyFileError(`${file}: ${(e as Error).message}`);
  }
  return { serviceUrl: url, agentId, name, key: AgentKey.fromJwk(raw['private_jwk']), createdAt: String(raw['created_at'] ?? '') };
}

/** Writes `key.json` (0600, atomically). `exclusive`: never replace an existing key. */
export function saveKeyFile(dir: string, contents: KeyFileContents, opts: { exclusive?: boolean } = {}): void {
  const data = {
    version: 1,
    service_url: contents.serviceUrl,
    agent_id: contents.agentId,
    name: contents.name,
    private_jwk: contents.key.toPrivateJwk(),
    created_at: contents.createdAt,
  };
  writePrivateFileAtomic(keyFilePath(dir), `${JSON.stringify(data, null, 2)}\n`, opts);
}
