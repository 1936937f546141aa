import type { Command } from '../command.ts';
import { agentFromDir } from '../agent-from-dir.ts';
import { str } from '../values.ts';
import { UsageError } from '../exit-codes.ts';

const KINDS = ['shadow_dom', 'bot_detection', 'input_not_detected', 'takeover_failed', 'handback_failed', 'session_not_cleared', 'other'];

export const takeoverReportCommand: Command = {
  name: 'takeover-report',
  summary: 'report a site where a take-over failed',
  usage: 'mandate-agent takeover-report --site SITE --kind KIND [--detail TEXT] [--url URL]',
  help: `Reports a site where taking over the browser did not work (POST /api/v1/takeover/report), so the
owner sees it in the app. Answers the report id.

  --site SITE     the site (host), at most 200 characters
  --kind KIND     one of ${KINDS.join(', ')}
  --detail TEXT   what happened, at most 280 characters
  --url URL       the page, at most 500 characters`,
  options: { site: { type: 'string' }, kind: { type: 'string' }, detail: { type: 'string' }, url: { type: 'string' } },
  positionals: { min: 0, max: 0 },

  async run(ctx, values) {
    const site = str(values, 'site');
    const kind = str(values, 'kind');
    if (!site || !kind || !KINDS.includes(kind)) throw new UsageError(`give --site and --kind (one of ${KINDS.join(', ')})`, 'takeover-report');
    const agent = agentFromDir(ctx);
    const detail = str(values, 'detail');
    const url = str(values, 'url');
    const id = await agent.reportTakeover({ site, kind, ...(detail !== undefined ? { detail } : {}), ...(url !== undefined ? { url } : {}) });
    ctx.out.result(`Reported: ${id}`, { ok: true, id });
  },
};
