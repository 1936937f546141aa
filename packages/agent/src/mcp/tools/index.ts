import type { McpDeps } from '../context.ts';
import type { SiteOperationTool } from '../site-tool.ts';
import type { McpTool } from '../tool.ts';
import { fetchTool } from './fetch.ts';
import { notifyTool } from './notify.ts';
import { planStatusTool, planSubmitTool } from './plans.ts';
import { requestAccessTool } from './request-access.ts';
import { requestApprovalTool } from './request-approval.ts';
import { siteOperationTool } from './site-operation.ts';
import { statusTool } from './status.ts';
import { takeoverTool } from './takeover.ts';
import { waitTool } from './wait.ts';

/** Every tool of decisions §27, then one per site operation (`--openapi`). */
export function mandateTools(d: McpDeps, siteTools: readonly SiteOperationTool[]): McpTool[] {
  return [
    statusTool(d),
    requestAccessTool(d),
    fetchTool(d),
    requestApprovalTool(d),
    notifyTool(d),
    planSubmitTool(d),
    planStatusTool(d),
    takeoverTool(d),
    waitTool(d),
    ...siteTools.map((op) => siteOperationTool(d, op)),
  ];
}
