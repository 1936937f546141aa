import { MandateAgent } from '../agent.ts';
import type { CliContext } from './command.ts';

export function agentFromDir(ctx: CliContext): MandateAgent {
  return MandateAgent.fromDirectory(ctx.dir);
}
