/**
 * A site operation offered to the model as a tool of its own (decisions §27, `mandate-agent mcp
 * --openapi`). The OpenAPI reader (mcp/openapi/) makes these; the MCP server registers each one and
 * runs it through `mandate_fetch`'s path (pass + DPoP proof, renewal, step-up) with `action` = `name`.
 */
export interface SiteOperationTool {
  /** The tool's name, unique in the server: 1-64 of [A-Za-z0-9_-]. */
  readonly name: string;
  /** What the model reads to decide when to call it. */
  readonly description: string;
  /** JSON Schema of the arguments: the operation's path, query and JSON body parameters. */
  readonly inputSchema: ToolInputSchema;
  /** The site id the access request and passes are for (the server URL's host, or `--site`). */
  readonly site: string;
  /** The scopes the first call asks the owner for. */
  readonly scopes: readonly string[];
  /** Marked as needing a step-up (informational: the site's `403 stepup_required` decides). */
  readonly stepup: boolean;
  /** The HTTP request for these arguments; throws `ToolArgumentError` naming the field that does not fit. */
  toRequest(args: Record<string, unknown>): SiteToolRequest;
}

export interface ToolInputSchema {
  type: 'object';
  properties: Record<string, object>;
  required?: string[];
  additionalProperties?: boolean;
}

export interface SiteToolRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** A JSON body, already serialized. */
  body?: string;
}

/** Arguments the model sent that do not fit the tool: a tool error naming `field`, never a protocol error. */
export class ToolArgumentError extends Error {
  constructor(readonly field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'ToolArgumentError';
  }
}

export interface OpenApiToolOptions {
  /** `--all-operations`: also offer operations without an `x-mandate` (or `x-authyouragent`) mark. */
  allOperations: boolean;
  /** `--site`: the site id for every tool, instead of each server URL's host. */
  site?: string;
}
