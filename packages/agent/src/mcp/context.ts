import type { MandateAgent } from '../agent.ts';
import type { PendingRegistry } from './pending.ts';

/** What every tool of one `mandate-agent mcp` process shares (one agent, one registry of unfinished work). */
export type McpDeps = {
  agent: MandateAgent;
  /** The agent directory (key and state), for the name and the sites `mandate_status` lists. */
  agentDir: string | undefined;
  agentName: string | null;
  pending: PendingRegistry;
  /** Default of a call's `wait_seconds` (`--wait-seconds`). */
  waitSeconds: number;
  /** Aborted when the server stops (site calls and waits end with it). */
  shutdown: AbortSignal;
  /** One site call's limit (30 s; a test makes it shorter). */
  siteTimeoutMs: number;
};
