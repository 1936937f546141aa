import type { SiteRequestInit } from '../../site-call.ts';
import type { Command, OptionValues } from '../command.ts';
import { agentFromDir } from '../agent-from-dir.ts';
import { EXIT, SiteUnreachableError, UsageError } from '../exit-codes.ts';
import { ProgressReporter } from '../progress.ts';
import { flag, seconds, str } from '../values.ts';
import { WAIT_OPTIONS, withResumeCommand } from '../waiting.ts';

export const callCommand: Command = {
  name: 'call',
  summary: 'call a site with the pass and a DPoP proof (step-up handled)',
  usage: 'mandate-agent call [--site SITE] [-X METHOD] [-d DATA] [-H "Name: value"]... [--stepup-action TEXT] URL',
  help: `Sends one request to URL with "Authorization: Bearer <pass>" and a fresh DPoP proof, renewing the
pass when due. The answer's body goes to stdout, "HTTP <status>" to stderr (with --json: one object
{status, content_type, body} on stdout, body parsed when it is JSON).

When the site answers 403 {"error":"stepup_required"}, the owner is asked to approve the action and
the request is sent once more with the step-up token (X-Service-Stepup). The action text is
--stepup-action, or else the "action" the site names in its answer.

  --site SITE           the site id (default: the URL's host, with :port when not the default)
  -X, --method METHOD   HTTP method (default GET, or POST with --data)
  -d, --data DATA       request body; sent as application/json when it parses as JSON
  -H, --header LINE     extra request header, "Name: value" (repeatable)
  --stepup-action TEXT  the action to ask the owner to approve if the site asks for a step-up
  --no-stepup           do not ask for a step-up; show the site's answer as it is
  --timeout SEC         stop waiting for the owner's step-up approval after SEC seconds
  --interval SEC        seconds between polls while waiting (default 2)

Exit 0 for a 2xx or 3xx answer, 1 for any other answer (the body is still printed), 3 when the
site or the service cannot be reached.`,
  options: {
    site: { type: 'string' },
    method: { type: 'string', short: 'X' },
    data: { type: 'string', short: 'd' },
    header: { type: 'string', short: 'H', multiple: true },
    'stepup-action': { type: 'string' },
    'no-stepup': { type: 'boolean' },
    ...WAIT_OPTIONS,
  },
  positionals: { min: 1, max: 1 },

  async run(ctx, values, [url = '']) {
    const data = str(values, 'data');
    const method = (str(values, 'method') ?? (data !== undefined ? 'POST' : 'GET')).toUpperCase();
    if (!/^[A-Z]{1,16}$/.test(method)) throw new UsageError(`not an HTTP method: ${method}`, 'call');
    if (data !== undefined && (method === 'GET' || method === 'HEAD')) throw new UsageError(`a ${method} request cannot carry --data; add -X POST (or another method)`, 'call');
    const headers = parseHeaders(values['header']);
    if (data !== undefined && !headers.has('content-type')) headers.set('content-type', isJson(data) ? 'application/json' : 'text/plain;charset=utf-8');
    const init: SiteRequestInit = { method, headers, ...(data !== undefined ? { body: data } : {}) };
    const site = str(values, 'site');
    const stepupAction = str(values, 'stepup-action');
    const timeoutMs = seconds(values, 'timeout', 'call', { min: 1, max: 3600 });
    const intervalMs = seconds(values, 'interval', 'call', { min: 0.2, max: 60 });
    const agent = agentFromDir(ctx);
    const progress = new ProgressReporter(ctx.out.stderr, stepupAction ? `"${stepupAction}"` : 'the step-up');

    let res: Response;
    try {
      res = await agent.fetch(url, init, {
        ...(site ? { site } : {}),
        ...(stepupAction ? { stepupAction } : {}),
        stepup: !flag(values, 'no-stepup'),
        stepupWait: { onProgress: progress.report, ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(intervalMs !== undefined ? { intervalMs } : {}) },
        signal: ctx.signal,
      });
    } catch (e) {
      // fetch itself fails with a TypeError when the site does not answer.
      if (e instanceof TypeError && /fetch failed/.test(e.message)) throw new SiteUnreachableError(url, e);
      throw withResumeCommand(ctx, e);
    } finally {
      progress.done();
    }
    const text = await res.text();
    const contentType = res.headers.get('content-type') ?? '';
    if (ctx.out.json) {
      ctx.out.result('', { status: res.status, content_type: contentType, body: parseMaybe(text, contentType) });
    } else {
      ctx.out.note(`HTTP ${res.status}`);
      if (text) ctx.out.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    }
    if (res.status === 403 && /stepup_required/.test(text) && !stepupAction && !flag(values, 'no-stepup')) {
      ctx.out.note('The site asks for a step-up but names no action: run again with --stepup-action "<the action text the site expects>".');
    }
    return res.status < 400 ? EXIT.ok : EXIT.refused;
  },
};

function parseHeaders(raw: OptionValues[string]): Headers {
  const headers = new Headers();
  for (const line of (Array.isArray(raw) ? raw : []).filter((l): l is string => typeof l === 'string')) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new UsageError(`a header must read "Name: value": ${JSON.stringify(line)}`, 'call');
    try {
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    } catch {
      throw new UsageError(`not a valid header: ${JSON.stringify(line)}`, 'call');
    }
  }
  return headers;
}

function isJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

function parseMaybe(text: string, contentType: string): unknown {
  if (/json/i.test(contentType) || isJson(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}
