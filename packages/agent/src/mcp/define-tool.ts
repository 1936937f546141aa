import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ToolArgumentError, type ToolInputSchema } from './site-tool.ts';
import type { McpTool, ToolCallContext } from './tool.ts';

type ToolSpec<I extends z.ZodObject> = {
  name: string;
  title?: string;
  description: string;
  input: I;
  /** Listed as the tool's outputSchema; the results' structuredContent follows it. */
  output?: z.ZodObject;
  run(args: z.output<I>, ctx: ToolCallContext): Promise<CallToolResult>;
};

/**
 * A tool whose arguments a zod schema checks: listed as its JSON Schema, and arguments that do not
 * fit become a `ToolArgumentError` naming the first field at fault (a tool error, never a protocol
 * error, so the model can correct itself).
 */
export function defineTool<I extends z.ZodObject>(spec: ToolSpec<I>): McpTool {
  return {
    name: spec.name,
    ...(spec.title ? { title: spec.title } : {}),
    description: spec.description,
    inputSchema: jsonSchemaOf(spec.input, 'input'),
    // Every field optional and others allowed: an error result carries {error, detail, next_step}
    // and a waiting one {status: "pending", txn_id} instead, and hosts (the SDK's Client among them)
    // check every structuredContent against the schema, errors included.
    ...(spec.output ? { outputSchema: jsonSchemaOf(z.looseObject(spec.output.partial().shape), 'output') } : {}),
    run: (args, ctx) => spec.run(parseArguments(spec.input, args), ctx),
  };
}

export function parseArguments<I extends z.ZodObject>(schema: I, args: Record<string, unknown>): z.output<I> {
  const parsed = schema.safeParse(args);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (!issue) throw new ToolArgumentError('arguments', 'do not fit the tool');
  // An unknown key is reported at the object that holds it: name the key itself.
  const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
  const path = [...issue.path, ...keys.slice(0, 1)].map(String).join('.') || 'arguments';
  throw new ToolArgumentError(path, issue.message);
}

function jsonSchemaOf(schema: z.ZodObject, io: 'input' | 'output'): ToolInputSchema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...json, type: 'object', properties: (json['properties'] as Record<string, object> | undefined) ?? {} } as ToolInputSchema;
}
