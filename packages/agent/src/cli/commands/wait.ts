import type { Command } from '../command.ts';
import { agentFromDir } from '../agent-from-dir.ts';
import { UsageError } from '../exit-codes.ts';
import { seconds } from '../values.ts';
import { WAIT_HELP, WAIT_OPTIONS, waitWithProgress } from '../waiting.ts';

export const waitCommand: Command = {
  name: 'wait',
  summary: 'wait for the owner\'s answer to a request (access or step-up)',
  usage: 'mandate-agent wait TXN_ID',
  help: `Polls a request (t_...) until the owner answers, with a progress line on stderr. Exit 0 when
approved, 1 when denied, expired or already collected. For an approved step-up it prints the
step-up token (collected by this poll: single use, valid for 60 s).

${WAIT_HELP}`,
  options: { ...WAIT_OPTIONS },
  positionals: { min: 1, max: 1 },

  async run(ctx, values, [txnId = '']) {
    if (!/^t_[a-z0-9]{1,62}$/.test(txnId)) throw new UsageError(`not a request id: ${JSON.stringify(txnId)} (expected t_...)`, 'wait');
    const timeoutMs = seconds(values, 'timeout', 'wait', { min: 1, max: 3600 });
    const intervalMs = seconds(values, 'interval', 'wait', { min: 0.2, max: 60 });
    const agent = agentFromDir(ctx);
    const answer = await waitWithProgress(ctx, agent, txnId, 'the request', {
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(intervalMs !== undefined ? { intervalMs } : {}),
    });
    const data = { txn_id: txnId, kind: answer.kind, site: answer.site, status: answer.status, scopes: answer.scopes, user_info: answer.user_info, ...(answer.action !== undefined ? { action: answer.action } : {}), ...(answer.stepup_token ? { stepup_token: answer.stepup_token } : {}) };
    if (answer.kind === 'stepup') {
      ctx.out.result([`Approved step-up at ${answer.site}: "${answer.action ?? ''}". Step-up token (single use, 60 s; send it as X-Service-Stepup):`, answer.stepup_token ?? ''], data);
    } else {
      ctx.out.result(`Approved: access to ${answer.site} with scopes ${answer.scopes.join(' ')}.`, data);
    }
  },
};
