import type { Command } from '../command.ts';
import { agentFromDir } from '../agent-from-dir.ts';
import { formatRemaining } from '../progress.ts';
import { flag, list, required, seconds } from '../values.ts';
import { WAIT_HELP, WAIT_OPTIONS, waitWithProgress } from '../waiting.ts';

export const requestCommand: Command = {
  name: 'request',
  summary: 'ask the owner for access to a site',
  usage: 'mandate-agent request --site SITE --scopes a,b [--user-info user:email,...] [--wait]',
  help: `Asks the owner for access to SITE (POST /api/v1/authz-requests). The owner gets a card on their phone
and has 5 minutes. Prints the request id; with --wait, waits for the answer with a progress line
on stderr. Once approved, \`token\` and \`call\` get passes by themselves.

  --site SITE         the site id: its host name, with :port for a test server (shop.example, localhost:3000)
  --scopes LIST       the scopes the site defines, comma-separated (repeatable)
  --user-info LIST    person fields the site may receive: user:name, user:email, user:phone
  --wait              wait for the owner's answer; exit 1 when denied or expired
${WAIT_HELP}

A second request while one waits, or while access is approved, is refused with 409 (exit 1).`,
  options: { site: { type: 'string' }, scopes: { type: 'string', multiple: true }, 'user-info': { type: 'string', multiple: true }, wait: { type: 'boolean' }, ...WAIT_OPTIONS },
  positionals: { min: 0, max: 0 },

  async run(ctx, values) {
    const site = required(values, 'site', 'request');
    const scopes = list(values, 'scopes');
    const userInfo = list(values, 'user-info');
    const timeoutMs = seconds(values, 'timeout', 'request', { min: 1, max: 3600 });
    const intervalMs = seconds(values, 'interval', 'request', { min: 0.2, max: 60 });
    const agent = agentFromDir(ctx);
    const created = await agent.requestAccess({ site, scopes, userInfo, signal: ctx.signal });
    const asked = `Asked the owner for access to ${created.site} (request ${created.txnId}); they have ${formatRemaining(created.expiresIn * 1000)} to answer.`;
    if (!flag(values, 'wait')) {
      ctx.out.result([asked, `Wait for the answer with: mandate-agent wait ${created.txnId}${ctx.dirFlag}`], { txn_id: created.txnId, site: created.site, status: 'pending', expires_in: created.expiresIn });
      return;
    }
    ctx.out.note(asked);
    const answer = await waitWithProgress(ctx, agent, created.txnId, `access to ${created.site}`, {
      expiresAt: created.expiresAt,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(intervalMs !== undefined ? { intervalMs } : {}),
    });
    ctx.out.result(
      [`Approved: access to ${answer.site} with scopes ${answer.scopes.join(' ')}${answer.user_info.length ? `; user info ${answer.user_info.join(' ')}` : ''}.`],
      { txn_id: created.txnId, site: answer.site, status: answer.status, scopes: answer.scopes, user_info: answer.user_info },
    );
  },
};
