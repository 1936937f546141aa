import { siteIdOfUrl } from '../../site-id.ts';
import type { SiteOperationTool } from '../site-tool.ts';
import { argumentCheck } from './argument-validator.ts';
import { buildRequest } from './build-request.ts';
import { toolInput } from './input-schema.ts';
import { type Mark, guessScope } from './mark.ts';
import type { Operation } from './operations.ts';
import type { Description } from './read-description.ts';
import { baseUrl } from './server-url.ts';
import { TOOL_NAME, derivedToolName } from './tool-name.ts';

/**
 * The tool for one operation, for `site` (`--site`, already normalized) or else its server URL's host.
 * Throws an Error, starting with the operation's label, saying why it cannot be one.
 */
export function operationTool(d: Description, o: Operation, mark: Exclude<Mark, { kind: 'excluded' }>, site: string | undefined): SiteOperationTool {
  try {
    const marked = mark.kind === 'marked' ? mark : undefined;
    const name = marked?.name ?? derivedToolName(o.op['operationId'], o.method, o.path);
    if (!TOOL_NAME.test(name)) throw new Error(`the tool name ${JSON.stringify(name)} is not 1-64 of A-Z a-z 0-9 _ -`);
    const base = baseUrl(o.servers, d.url, o.label);

    const { schema, plan } = toolInput(o, d.dialect);
    const check = argumentCheck(schema, d.dialect);
    return {
      name,
      description: marked?.description ?? describe(o),
      inputSchema: schema,
      site: site ?? siteIdOfUrl(base.href),
      scopes: marked?.scopes ?? [guessScope(o.method)],
      stepup: marked?.stepup ?? false,
      toRequest(args) {
        check(args);
        return buildRequest(o.method, base, o.path, plan, args);
      },
    };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    throw new Error(message.startsWith(o.label) ? message : `${o.label}: ${message}`);
  }
}

// What the description says about the operation; the model needs something even when it says nothing.
function describe(o: Operation): string {
  const texts = [o.op['summary'], o.op['description']].filter((t): t is string => typeof t === 'string' && t.trim() !== '');
  return texts.length > 0 ? texts.join('\n\n') : `${o.method} ${o.path}`;
}
