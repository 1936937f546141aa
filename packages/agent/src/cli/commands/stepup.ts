import type { Command } from '../command.ts';
import { agentFromDir } from '../agent-from-dir.ts';
import { DETAILS_HELP, DETAILS_OPTIONS, DETAILS_USAGE, detailsFromFlags } from '../details-flags.ts';
import { flag, required, seconds } from '../values.ts';
import { WAIT_HELP, WAIT_OPTIONS, waitWithProgress } from '../waiting.ts';

export const stepupCommand: Command = {
  name: 'stepup',
  summary: 'ask the owner to approve one sensitive action; print the step-up token',
  usage: `mandate-agent stepup --site SITE --action TEXT ${DETAILS_USAGE} [--no-wait]`,
  help: `Asks the owner to approve one sensitive action at SITE (POST /api/v1/stepup), waits for the answer and
prints the step-up token on stdout. The token is valid for one request within 60 s: send it as
"X-Service-Stepup". (\`call\` does all this by itself when a site answers stepup_required.)

  --site SITE     the site id; access to it must be approved already
  --action TEXT   the action, exactly as the site expects it (the owner reads it as written)
${DETAILS_HELP}
                       The token then carries the digest (details_digest): a site that checks it
                       accepts the token only for exactly these details.
  --no-wait       only ask; collect the token later with: mandate-agent wait TXN_ID
${WAIT_HELP}`,
  options: { site: { type: 'string' }, action: { type: 'string' }, ...DETAILS_OPTIONS, 'no-wait': { type: 'boolean' }, ...WAIT_OPTIONS },
  positionals: { min: 0, max: 0 },

  async run(ctx, values) {
    const site = required(values, 'site', 'stepup');
    const action = required(values, 'action', 'stepup');
    const details = detailsFromFlags(values, 'stepup');
    const timeoutMs = seconds(values, 'timeout', 'stepup', { min: 1, max: 3600 });
    const intervalMs = seconds(values, 'interval', 'stepup', { min: 0.2, max: 60 });
    const agent = agentFromDir(ctx);
    const created = await agent.requestStepup(site, action, { signal: ctx.signal, ...(details && { details }) });
    const bound = details ? { details_digest: details.digest } : {};
    const asked = `Asked the owner to approve "${action}" at ${created.site}${details ? `, bound to details ${details.digest}` : ''} (request ${created.txnId}).`;
    if (flag(values, 'no-wait')) {
      ctx.out.result([asked, `Collect the token with: mandate-agent wait ${created.txnId}${ctx.dirFlag}`], { txn_id: created.txnId, site: created.site, action, ...bound, status: 'pending', expires_in: created.expiresIn });
      return;
    }
    ctx.out.note(asked);
    const answer = await waitWithProgress(ctx, agent, created.txnId, `"${action}"`, {
      expiresAt: created.expiresAt,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(intervalMs !== undefined ? { intervalMs } : {}),
    });
    ctx.out.note('Approved. Step-up token (single use, 60 s; send it as X-Service-Stepup):');
    ctx.out.result(answer.stepup_token ?? '', { txn_id: created.txnId, site: created.site, action, ...bound, status: answer.status, stepup_token: answer.stepup_token });
  },
};
