import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolInputSchema } from './site-tool.ts';

/** Where a waiting tool reports progress (a `notifications/progress` of the call's progressToken). */
export type ProgressSink = (progress: { progress: number; total?: number; message: string }) => Promise<void>;

export type ToolCallContext = {
  /** Aborted when the host cancels the call (the work it started may go on, see pending.ts). */
  signal: AbortSignal;
  /** Present when the call carries a progressToken. */
  progress: ProgressSink | undefined;
};

/** One tool of the server: listed with its JSON Schemas, run with the model's raw arguments. */
export interface McpTool {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: ToolInputSchema;
  readonly outputSchema?: ToolInputSchema;
  /** Resolves with the result (a tool error included); may throw, and the server turns it into a tool error. */
  run(args: Record<string, unknown>, ctx: ToolCallContext): Promise<CallToolResult>;
}
