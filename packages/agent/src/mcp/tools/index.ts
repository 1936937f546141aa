import type { McpDeps } from '../context.ts';
import type { SiteOperationTool } from '../site-tool.ts';
import type { McpTool } from '../tool.ts';
import { statusTool } from './status.ts';

/** Every tool of decisions §27, then one per site operation (`--openapi`). */
export function mandateTools(d: McpDeps, _siteTools: readonly SiteOperationTool[]): McpTool[] {
  return [statusTool(d)];
}
