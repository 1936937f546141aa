import type { AccessRequest } from '../agent.ts';
import { MandateError } from '../client/errors.ts';
import type { CreatedRequest } from '../client/types.ts';
import type { Pass } from '../passes/pass-keeper.ts';
import { normalizeSiteId } from '../site-id.ts';
import type { McpDeps } from './context.ts';
import { missingScope } from './missing-scope.ts';
import { ToolFailure } from './results.ts';

export type FiledAccess =
  | { kind: 'filed'; created: CreatedRequest & { site: string } }
  /** The owner had already granted every scope asked for: nothing to ask, the pass is there. */
  | { kind: 'held'; pass: Pass };

/**
 * Files an access request (`mandate_request_access`, a site operation's first call). The service's
 * two 409s become what the model can act on, since its own next step ("get a pass with POST
 * /api/v1/token") is this process's business:
 * - access already approved, with every scope asked for: `held`, not an error;
 * - access already approved, without some: a `missingScope` error (the owner must revoke it first);
 * - a request for the site already waiting: an error pointing at `mandate_wait` of it when this
 *   process filed it.
 */
export async function fileAccessRequest(d: McpDeps, req: AccessRequest): Promise<FiledAccess> {
  try {
    return { kind: 'filed', created: await d.agent.requestAccess(req) };
  } catch (e) {
    if (!(e instanceof MandateError) || e.status !== 409) throw e;
    const site = normalizeSiteId(req.site);
    if (/already approved/i.test(e.detail)) {
      const pass = await d.agent.pass(site, { signal: d.shutdown }).catch(() => undefined);
      const asked = [...new Set(req.scopes)];
      const lacking = asked.filter((s) => !pass?.scope.includes(s));
      if (pass && lacking.length === 0) return { kind: 'held', pass };
      throw missingScope('access_already_granted', site, pass?.scope, lacking, `the owner has already granted this agent access to ${site}`);
    }
    const waiting = d.pending.accessWaiting(site);
    throw new ToolFailure(
      'request_already_waiting',
      `a request for access to ${site} is already waiting for the owner's answer`,
      waiting
        ? `call mandate_wait with {"txn_id": "${waiting}"} for its answer`
        : 'wait for the owner to answer it (it expires within 5 minutes); if they do not approve it, call mandate_request_access again',
      { site, ...(waiting ? { txn_id: waiting } : {}) },
    );
  }
}
