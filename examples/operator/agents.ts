// Creating an agent for a person who connected: the key pair is made here, Mandate gets only the
// public half, and the private half is kept in DATA_DIR for the agent to run with.
import { AgentKey } from '@mandate/agent';
import type { OperatorConfig } from './config.ts';
import type { CreatedAgent, OperatorApi } from './operator-api.ts';
import type { OperatorStore } from './store.ts';

export async function createAgent(api: OperatorApi, store: OperatorStore, cfg: Pick<OperatorConfig, 'mandateUrl'>, connectionId: string, name: string): Promise<CreatedAgent & { dir: string }> {
  const key = await AgentKey.generate();
  // 403 when the person ended the connection (or you did), or when it has max_agents agents already.
  const agent = await api.createAgent(connectionId, name, key.publicJwk);
  const dir = store.saveAgentKey(agent.agent_id, agent.name, key, cfg.mandateUrl);
  return { ...agent, dir };
}
