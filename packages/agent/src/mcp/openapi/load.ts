import { normalizeSiteId } from '../../site-id.ts';
import type { OpenApiToolOptions, SiteOperationTool } from '../site-tool.ts';
import { readMark } from './mark.ts';
import { operationTool } from './operation-tool.ts';
import { listOperations } from './operations.ts';
import { readDescription } from './read-description.ts';

/**
 * The tools for `mandate-agent mcp --openapi <source>...` (decisions §27): one per operation marked
 * `x-mandate` (or `x-authyouragent`), and with `--all-operations` one per unmarked operation too.
 * A description that cannot be read, a marked operation that cannot be a tool, a description without
 * any tool, or two tools with one name: an Error whose message says what to fix. An unmarked
 * operation that cannot be a tool is left out with a process warning (one odd endpoint of a large
 * API should not stop the rest).
 */
export async function loadOpenApiTools(sources: string[], opts: OpenApiToolOptions): Promise<SiteOperationTool[]> {
  const site = opts.site === undefined ? undefined : normalizeSiteId(opts.site);
  const tools: SiteOperationTool[] = [];
  const origins = new Map<string, string>();
  for (const source of sources) {
    const d = await readDescription(source);
    let count = 0;
    for (const o of listOperations(d)) {
      const mark = readMark(o.op, o.label);
      if (mark.kind === 'excluded' || (mark.kind === 'unmarked' && !opts.allOperations)) continue;
      let tool: SiteOperationTool;
      try {
        tool = operationTool(d, o, mark, site);
      } catch (e) {
        if (mark.kind === 'marked') throw e;
        process.emitWarning(`left out: ${(e as Error).message}`, { code: 'MANDATE_OPENAPI_OPERATION_SKIPPED' });
        continue;
      }
      const clash = origins.get(tool.name);
      if (clash !== undefined) throw new Error(`two operations would be the tool "${tool.name}": ${clash} and ${o.label}; rename one (x-mandate "name")`);
      origins.set(tool.name, o.label);
      tools.push(tool);
      count++;
    }
    if (count === 0) {
      throw new Error(
        opts.allOperations
          ? `--openapi ${source}: no operations to offer as tools`
          : `--openapi ${source}: no operation is marked with x-mandate; mark the ones agents may call, or pass --all-operations to offer every operation`,
      );
    }
  }
  return tools;
}
