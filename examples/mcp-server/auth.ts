import { type McpAuth, type Mode, mcpAuth } from '@mandate/site';

export type AuthOptions = { service: string; resource: string; mode: Mode; approvalWaitSec?: number };

/**
 * The notes server protected by Mandate: a pass for this resource with `notes:read` to connect and
 * list; `delete_note` needs `notes:write` too, and the owner's approval of each call on their phone.
 */
export function protectNotes(o: AuthOptions): McpAuth {
  return mcpAuth({
    service: o.service, // Mandate: the authorization server named in the metadata
    resource: o.resource, // this server's URL, as MCP clients connect to it: passes are for it alone
    scopes: ['notes:read'], // asked for in the 401 challenge
    mode: o.mode,
    tools: {
      list_notes: { scopes: ['notes:read'] },
      // `approval: true` marks the tool; the handler itself must be wrapped with withApproval (tools.ts).
      delete_note: { scopes: ['notes:write'], approval: true, summary: (args) => `Delete note ${String(args['title'])}` },
    },
    ...(o.approvalWaitSec === undefined ? {} : { approvalWaitSec: o.approvalWaitSec }),
    onError: (e) => console.warn(`mandate: ${e.message}`),
  });
}
