import { z } from 'zod';
import type { McpDeps } from '../context.ts';
import { defineTool } from '../define-tool.ts';
import { toolResult } from '../results.ts';
import { sitesWithAccess } from '../sites.ts';

const site = z.object({ site: z.string(), scopes: z.array(z.string()), grant_expires_at: z.string().nullable(), uses_left: z.number().nullable() });

export function statusTool(d: McpDeps) {
  return defineTool({
    name: 'mandate_status',
    title: 'Mandate: who am I',
    description: 'This agent as Mandate sees it: its id and name, its flag (ok, suspicious or revoked), the sites it has access to (scopes, expiry) and the sites whose access the owner revoked.',
    input: z.strictObject({}),
    output: z.object({ agent_id: z.string(), name: z.string().nullable(), flag: z.string(), sites: z.array(site), revoked_sites: z.array(z.string()) }),
    async run() {
      const status = await d.agent.status();
      const sites = d.agentDir ? await sitesWithAccess(d.agentDir, d.agent.agentId) : [];
      const lines = [
        `Agent ${d.agentName ? `"${d.agentName}" ` : ''}${status.agent_id}: ${status.global_flag}.`,
        sites.length
          ? `Access: ${sites.map((s) => `${s.site} (${s.scopes.join(' ')}${s.grant_expires_at ? `, until ${s.grant_expires_at}` : ''})`).join('; ')}.`
          : 'No site access yet: ask with mandate_request_access.',
        ...(status.revoked_sites.length ? [`Revoked: ${status.revoked_sites.join(', ')}.`] : []),
      ];
      return toolResult({ agent_id: status.agent_id, name: d.agentName, flag: status.global_flag, sites, revoked_sites: status.revoked_sites }, lines.join('\n'));
    },
  });
}
