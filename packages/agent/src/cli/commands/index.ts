import type { Command } from '../command.ts';
import { callCommand } from './call.ts';
import { initCommand } from './init.ts';
import { mcpCommand } from './mcp.ts';
import { notifyCommand } from './notify.ts';
import { pairCommand } from './pair.ts';
import { planCommand } from './plan.ts';
import { reportStatusCommand } from './report-status.ts';
import { requestCommand } from './request.ts';
import { setIdCommand } from './set-id.ts';
import { statusCommand } from './status.ts';
import { stepupCommand } from './stepup.ts';
import { approveCommand } from './approve.ts';
import { tokenCommand } from './token.ts';
import { takeoverReportCommand } from './takeover-report.ts';
import { waitCommand } from './wait.ts';
import { whoamiCommand } from './whoami.ts';
import { wbaCommand } from './wba.ts';

/** In the order `--help` lists them: the order an agent uses them in. */
export const COMMANDS: Command[] = [
  initCommand,
  pairCommand,
  setIdCommand,
  whoamiCommand,
  statusCommand,
  requestCommand,
  waitCommand,
  tokenCommand,
  callCommand,
  stepupCommand,
  approveCommand,
  notifyCommand,
  planCommand,
  reportStatusCommand,
  takeoverReportCommand,
  wbaCommand,
  mcpCommand,
];
