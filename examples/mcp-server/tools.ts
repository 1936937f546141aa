import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpAuth } from '@mandate/site';
import type { Notes } from './notes.ts';

type Extra = { authInfo?: { extra?: Record<string, unknown> } };

/** The person the pass acts for: mcpAuth put the verified pass in `extra.authInfo`. */
const ownerOf = (extra: Extra): string => String(extra.authInfo?.extra?.['userId']);

const text = (t: string, isError = false) => ({ content: [{ type: 'text' as const, text: t }], ...(isError ? { isError } : {}) });

/** The notes tools on the official MCP SDK's server. */
export function notesServer(mandate: McpAuth, notes: Notes): McpServer {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });

  server.registerTool('list_notes', { description: 'List your notes', inputSchema: {} }, async (_args, extra) => text(JSON.stringify(notes.list(ownerOf(extra)))));

  // Runs only once the owner approved this very call (tool name and arguments) on their phone.
  const deleteApproved = mandate.withApproval('delete_note', async ({ title }: { title: string }, extra: Extra) => {
    notes.delete(ownerOf(extra), title);
    return text(`Deleted note ${title}`);
  });
  server.registerTool(
    'delete_note',
    { description: 'Delete one of your notes (the owner approves each deletion)', inputSchema: { title: z.string().min(1).max(200) } },
    async (args, extra) => {
      // Cheap checks first: the owner is not asked about a note that is not there.
      if (!notes.has(ownerOf(extra), args.title)) return text(`There is no note ${args.title}`, true);
      return deleteApproved(args, extra);
    },
  );
  return server;
}

/** One stateless MCP exchange: a server and a transport per request, closed with it. */
export async function serveMcp(mandate: McpAuth, notes: Notes, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
  const server = notesServer(mandate, notes);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}
