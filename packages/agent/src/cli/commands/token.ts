import type { Command } from '../command.ts';
import { agentFromDir } from '../agent-from-dir.ts';
import { flag, required } from '../values.ts';

export const tokenCommand: Command = {
  name: 'token',
  summary: 'get a valid pass for a site (renewing it when due)',
  usage: 'mandate-agent token --site SITE [--show] [--refresh]',
  help: `Makes sure a valid pass for SITE is kept: the first one after an approval, then renewed with the
refresh token a minute before it expires. Prints what the pass allows and until when. The pass
itself is printed only with --show; the refresh token never.

  --site SITE   the site id
  --show        also print the pass (access_token): whoever holds it still needs the agent key to use it
  --refresh     renew now even if the kept pass is still fresh

Exit 1 with "access_required" when only a new approval can give a pass (ask with: request).`,
  options: { site: { type: 'string' }, show: { type: 'boolean' }, refresh: { type: 'boolean' } },
  positionals: { min: 0, max: 0 },

  async run(ctx, values) {
    const site = required(values, 'site', 'token');
    const agent = agentFromDir(ctx);
    const pass = await agent.pass(site, { force: flag(values, 'refresh'), signal: ctx.signal });
    const expiresIn = Math.max(0, Math.round((pass.expiresAt - Date.now()) / 1000));
    const show = flag(values, 'show');
    const data = {
      site: pass.site,
      scope: pass.scope,
      expires_at: new Date(pass.expiresAt).toISOString(),
      expires_in: expiresIn,
      grant_expires_at: pass.grantExpiresAt,
      grant_uses_left: pass.grantUsesLeft,
      fetched: pass.fetched,
      ...(show ? { access_token: pass.accessToken } : {}),
    };
    ctx.out.result([
      `Pass for ${pass.site}: scopes ${pass.scope.join(' ')}; valid for ${expiresIn} s${pass.fetched ? ' (new from the service)' : ' (kept)'}.`,
      ...(pass.grantExpiresAt ? [`The approval ends at ${pass.grantExpiresAt}.`] : []),
      ...(pass.grantUsesLeft !== null ? [`Passes left on this approval: ${pass.grantUsesLeft}.`] : []),
      ...(show ? [pass.accessToken] : []),
    ], data);
  },
};
