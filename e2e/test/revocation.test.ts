import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { until } from '../../packages/server/test/helpers/until.ts';
import { type AgentCli, show } from './helpers/cli.ts';
import { Deployment, SITE } from './helpers/deployment.ts';
import type { Shop } from './helpers/shop.ts';
import { outcome, signedRequest } from './helpers/signed-request.ts';

// The owner takes access away while the agent holds a valid pass: the cloud shop (Mandate checks
// every request) refuses at once, the local shop (its own checks against the signed revocation
// list, polled every rev_ttl) within rev_ttl. The shops' answers are read with requests signed as
// the agent (the CLI would react to them); the CLI then shows what an agent meets.

const REV_TTL_SEC = 2;
/** How long past rev_ttl a local shop may take to show a revocation: a slow poll on a busy machine. */
const MARGIN_SEC = 8;

describe('revocation seen by the shops', () => {
  let d: Deployment;

  before(async () => {
    d = await Deployment.start({ local: { revTtlSec: REV_TTL_SEC, maxStaleSec: 5 * REV_TTL_SEC } });
  });
  after(async () => {
    await d?.stop();
  });

  /** A new agent with approved access and its pass, accepted by both shops. */
  async function agentWithAccess(name: string): Promise<{ agent: AgentCli; pass: string }> {
    const agent = await d.newAgent(name);
    await d.grantAccess(agent);
    const pass = await d.pass(agent);
    for (const shop of [d.cloud, d.local]) {
      assert.equal(outcome(await signedRequest(agent, pass, `${shop.url}/products`)), '200', `${shop.mode} before the revocation\n${d.logs()}`);
    }
    return { agent, pass };
  }

  /** Polls the local shop with the agent's pass until it refuses, within rev_ttl + margin; its answer. */
  async function localRefusal(agent: AgentCli, pass: string, local: Shop): Promise<string> {
    let last = '';
    return until(
      'the local shop to refuse the revoked pass',
      async () => {
        last = outcome(await signedRequest(agent, pass, `${local.url}/products`));
        return last === '200' ? undefined : last; // 200 until its next poll of the revocation list
      },
      { ms: (REV_TTL_SEC + MARGIN_SEC) * 1000, everyMs: 200, describe: () => `last answer ${last}\n${d.logs()}` },
    );
  }

  it('grant revocation: the cloud shop refuses at once, the local shop within rev_ttl; the CLI can get no new pass and its status lists the site', async () => {
    const { agent, pass } = await agentWithAccess('Grant-revoked agent');
    await d.owner.ok('POST', `/api/grants/${await d.grantOf(agent)}/revoke`);

    assert.equal(outcome(await signedRequest(agent, pass, `${d.cloud.url}/products`)), '401 grant_revoked');
    assert.equal(await localRefusal(agent, pass, d.local), '401 grant_revoked');

    // The CLI renews its pass after grant_revoked, and the service refuses: access must be asked again.
    const called = await agent.run('call', '--site', SITE, `${d.local.url}/products`);
    assert.equal(called.code, 1, show(called));
    const error = called.json?.['error'] as { code?: string; site_answer?: string } | undefined;
    assert.deepEqual([error?.code, error?.site_answer], ['access_required', 'grant_revoked'], show(called));
    // It says what the site answered, and the CLI command to run next (not a raw HTTP call).
    assert.match(called.stderr, /no access to .*: the site answered grant_revoked/, show(called));
    assert.match(called.stderr, /next step: ask the owner again: .*request --site /, show(called));
    const status = await agent.run('status');
    assert.equal(status.code, 0, show(status));
    assert.deepEqual([status.json?.['global_flag'], status.json?.['revoked_sites']], ['ok', [SITE]], show(status));
  });

  for (const how of ['flags the agent revoked', 'removes the agent'] as const) {
    it(`agent revocation (the owner ${how}): the cloud shop refuses at once, the local shop within rev_ttl, the CLI's status reports it revoked`, async () => {
      const { agent, pass } = await agentWithAccess(`Agent the owner ${how}`);
      if (how === 'flags the agent revoked') await d.owner.ok('POST', `/api/agents/${agent.agentId}/flag`, { flag: 'revoked' });
      else await d.owner.ok('DELETE', `/api/agents/${agent.agentId}`);

      assert.equal(outcome(await signedRequest(agent, pass, `${d.cloud.url}/products`)), '401 agent_revoked');
      assert.equal(await localRefusal(agent, pass, d.local), '401 agent_revoked');

      const called = await agent.run('call', '--site', SITE, `${d.local.url}/products`);
      assert.equal(called.code, 1, show(called));
      // Explained like a revoked site access: what the site and the service answered, and the next step.
      const error = called.json?.['error'] as { code?: string; site_answer?: string } | undefined;
      assert.deepEqual([error?.code, error?.site_answer], ['agent_revoked', 'agent_revoked'], show(called));
      assert.match(called.stderr, /this agent was revoked by its owner: the site answered agent_revoked/, show(called));
      assert.match(called.stderr, /next step: only the owner can undo this/, show(called));
      const status = await agent.run('status');
      assert.equal(status.code, 1, show(status));
      assert.equal((status.json?.['error'] as { code?: string } | undefined)?.code, 'agent_revoked', show(status));
    });
  }
});
