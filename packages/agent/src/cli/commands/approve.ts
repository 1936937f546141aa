import { textDigestSet } from '@mandate/protocol';
import type { Command } from '../command.ts';
import type { AgentApprovalDetails } from '../../agent.ts';
import { agentFromDir } from '../agent-from-dir.ts';
import { DETAILS_HELP, DETAILS_OPTIONS, DETAILS_USAGE, detailsFromFlags } from '../details-flags.ts';
import { ApprovalError } from '../../client/errors.ts';
import { UsageError } from '../exit-codes.ts';
import { flag, seconds, str } from '../values.ts';
import { WAIT_HELP, WAIT_OPTIONS, waitWithProgress } from '../waiting.ts';

/** Exit codes of `approve` (docs/agents/cli.md): a script branches on the owner's answer. */
export const APPROVE_EXIT = { approved: 0, denied: 1, error: 2, expired: 3 } as const;

const TEXT_FIELDS = ['label', 'amount', 'item', 'page', 'host', 'target-host', 'path'] as const;

export const approveCommand: Command = {
  name: 'approve',
  summary: 'ask the owner to approve one action on any site; exit 0 approved, 1 denied, 2 error, 3 expired',
  usage: `mandate-agent approve SITE ACTION [--label TEXT] [--amount TEXT] [--item TEXT] [--page TEXT] [--host HOST] [--target-host HOST] [--path PATH] [--card-fields] [--password-fields] [--text TEXT]... ${DETAILS_USAGE}`,
  help: `Asks the owner to approve one action on SITE (POST /api/v1/agent-approval); the site need not use
Mandate and no access grant is needed. Waits for the answer unless the owner's approval mode approves
it at once. Exit code: 0 approved, 1 denied, 2 error, 3 expired (nobody answered in time).

  SITE              the host name the agent acts on, e.g. shop.example.com
  ACTION            [a-z0-9_:-], 1 to 64 characters, e.g. checkout:submit
  --label TEXT      the button or link text (cut to 80 characters)
  --amount TEXT     an amount shown on the page (money: always asks unless a plan covers it)
  --item TEXT, --page TEXT, --host HOST, --target-host HOST, --path PATH
  --card-fields, --password-fields   the form has such fields
  --text TEXT       a text the click sends or publishes (repeatable, at most 8): only its digest
                    goes to the service, and a plan step that names texts matches only the same set
${DETAILS_HELP}
${WAIT_HELP}`,
  options: {
    label: { type: 'string' }, amount: { type: 'string' }, item: { type: 'string' }, page: { type: 'string' }, host: { type: 'string' }, 'target-host': { type: 'string' }, path: { type: 'string' },
    'card-fields': { type: 'boolean' }, 'password-fields': { type: 'boolean' }, text: { type: 'string', multiple: true }, ...DETAILS_OPTIONS, ...WAIT_OPTIONS,
  },
  positionals: { min: 2, max: 2 },

  async run(ctx, values, positionals) {
    const [site, action] = positionals;
    if (site === undefined || action === undefined) throw new UsageError('approve needs SITE and ACTION', 'approve');
    const details: AgentApprovalDetails = {};
    for (const f of TEXT_FIELDS) {
      const v = str(values, f);
      if (v !== undefined) (details as Record<string, string>)[f.replace('-', '_')] = v;
    }
    if (flag(values, 'card-fields')) details.card_fields = true;
    if (flag(values, 'password-fields')) details.password_fields = true;
    // Each --text whole (commas and all); only digests leave this machine (decisions §20).
    const texts = ([] as unknown[]).concat(values['text'] ?? []).filter((v): v is string => typeof v === 'string');
    if (texts.length > 8) throw new UsageError('approve takes at most 8 --text', 'approve');
    if (texts.length > 0) details.text_digests = textDigestSet(texts);
    const bound = detailsFromFlags(values, 'approve');
    if (bound) Object.assign(details, bound);
    const timeoutMs = seconds(values, 'timeout', 'approve', { min: 1, max: 3600 });
    const intervalMs = seconds(values, 'interval', 'approve', { min: 0.2, max: 60 });
    try {
      const agent = agentFromDir(ctx);
      const created = await agent.requestApproval(site, action, details, { signal: ctx.signal });
      if (created.status !== 'approved') {
        ctx.out.note(`Asked the owner to approve ${action} on ${created.site} (request ${created.txnId}).`);
        await waitWithProgress(ctx, agent, created.txnId, action, {
          expiresAt: created.expiresAt,
          ...(timeoutMs !== undefined ? { timeoutMs } : {}),
          ...(intervalMs !== undefined ? { intervalMs } : {}),
        });
      }
      ctx.out.result(`approved: ${action} on ${created.site}`, { txn_id: created.txnId, site: created.site, action, ...(bound && { details_digest: bound.digest }), status: 'approved' });
      return APPROVE_EXIT.approved;
    } catch (e) {
      if (e instanceof ApprovalError && e.outcome === 'denied') {
        ctx.out.error(e);
        return APPROVE_EXIT.denied;
      }
      if (e instanceof ApprovalError && (e.outcome === 'expired' || e.outcome === 'timeout')) {
        ctx.out.error(e);
        return APPROVE_EXIT.expired;
      }
      ctx.out.error(e);
      return APPROVE_EXIT.error;
    }
  },
};
