// The example operator's command line, for what its own staff (or its systems) do with the operator
// API; each command prints JSON.
//   node --import tsx examples/operator/cli.ts connections
//   node --import tsx examples/operator/cli.ts end-connection <connection_id>
//   node --import tsx examples/operator/cli.ts create-agent <connection_id> <name>
//   node --import tsx examples/operator/cli.ts agents [connection_id]
//   node --import tsx examples/operator/cli.ts remove-agent <agent_id>
// Environment: MANDATE_URL, OPERATOR_ID, OPERATOR_SECRET, DATA_DIR (see config.ts).
import { createAgent } from './agents.ts';
import { readConfig } from './config.ts';
import { OperatorApi } from './operator-api.ts';
import { OperatorStore } from './store.ts';

const [command = '', first = '', second = ''] = process.argv.slice(2);

const need = (value: string, what: string): string => {
  if (!value) throw new Error(`${command}: give the ${what}`);
  return value;
};

async function run(): Promise<unknown> {
  const cfg = readConfig();
  const api = new OperatorApi(cfg);
  const store = new OperatorStore(cfg.dataDir);
  switch (command) {
    case 'connections': return api.listConnections();
    case 'end-connection': return api.endConnection(need(first, 'connection id (cn_...)'));
    case 'create-agent': return createAgent(api, store, cfg, need(first, 'connection id (cn_...)'), need(second, 'agent name'));
    case 'agents': return api.listAgents(first);
    case 'remove-agent': return api.removeAgent(need(first, 'agent id (ag_...)'));
    default: throw new Error('commands: connections, end-connection, create-agent, agents, remove-agent');
  }
}

try {
  console.log(JSON.stringify(await run(), null, 2));
} catch (e) {
  console.error(e instanceof Error ? e.message : String(e));
  process.exitCode = 1;
}
