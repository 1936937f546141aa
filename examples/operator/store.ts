// What this operator keeps, in DATA_DIR: the connections people made (connections.json) and, for
// each agent it created, a directory agents/<agent_id>/ holding the agent's private key in the
// `mandate-agent` key file format, so that the agent runs with `mandate-agent --dir <that directory>`
// or `MandateAgent.fromDirectory(<that directory>)`. The private keys never leave this machine.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AgentKey, saveKeyFile } from '@mandate/agent';
import type { Connection } from './operator-api.ts';

export type KeptConnection = Connection & { connected_at: string };

export class OperatorStore {
  constructor(private readonly dataDir: string) {
    mkdirSync(join(dataDir, 'agents'), { recursive: true, mode: 0o700 });
  }

  connections(): KeptConnection[] {
    try {
      return JSON.parse(readFileSync(join(this.dataDir, 'connections.json'), 'utf8')) as KeptConnection[];
    } catch {
      return [];
    }
  }

  /** A person who connects again gets the same connection from Mandate: kept once. */
  saveConnection(c: Connection): void {
    const others = this.connections().filter((k) => k.connection_id !== c.connection_id);
    const all = [...others, { ...c, connected_at: new Date().toISOString() }];
    writeFileSync(join(this.dataDir, 'connections.json'), `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
  }

  /** Where the agent's key goes; written once Mandate has given the agent its id. */
  agentDir(agentId: string): string {
    return join(this.dataDir, 'agents', agentId);
  }

  saveAgentKey(agentId: string, name: string, key: AgentKey, serviceUrl: string): string {
    const dir = this.agentDir(agentId);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    saveKeyFile(dir, { serviceUrl, agentId, name, key, createdAt: new Date().toISOString() }, { exclusive: true });
    return dir;
  }
}
