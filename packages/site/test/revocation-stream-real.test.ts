import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Child, runNode } from '../../server/test/helpers/child-process.ts';
import { HttpOwner, type RemoteAgent, call, expectStatus, remoteAgent, remoteGrant, remoteToken } from '../../server/test/helpers/over-http.ts';
import { freePort, startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { until } from '../../server/test/helpers/until.ts';
import type { VerifierStatus } from '../src/index.ts';

// The revocation event stream (decisions §30) end to end: a real Mandate process (SQLite) and a
// local-mode site in a process of its own (./helpers/stream-site.ts, default `revocation`), with
// rev_ttl an hour, so a poll cannot explain a refusal. The agent asks the site every 100 ms from the
// moment the owner's change returned; the site must follow within REFUSED_WITHIN_MS (well under
// rev_ttl; we do not assert sub-second timing on a shared machine, the measured times are printed).
// Then the service is killed mid-stream: the site falls back to polling, and when a new process comes
// back on the same data dir and port it resumes the stream and follows changes at once again.

const SITE = 'shop.example';
const REV_TTL_SEC = 3600;
const REFUSED_WITHIN_MS = 5_000;

describe('the revocation stream between a real Mandate and a local-mode site', { timeout: 240_000 }, () => {
  let port: number;
  let dataDir: string;
  let mandate: ServerProcess;
  let site: Child;
  let siteUrl: string;
  /** The control: the same site with `revocation: 'poll'`, which cannot know of a change for an hour. */
  let pollSite: Child;
  let pollUrl: string;
  let owner: HttpOwner;
  /** What the site took to follow each change, for the log. */
  const measured: string[] = [];

  const startMandate = () => startServer({ name: 'mandate', port, env: { DATA_DIR: dataDir, BASE_URL: `http://127.0.0.1:${port}` } });
  const logs = () => `\n--- mandate ---\n${mandate.logs()}\n--- site ---\n${site.output()}`;

  before(async () => {
    port = await freePort();
    dataDir = mkdtempSync(join(tmpdir(), 'mandate-stream-'));
    mandate = await startMandate();
    const startSite = async (name: string, revocation: string) => {
      const sitePort = await freePort();
      const url = `http://127.0.0.1:${sitePort}`;
      const child = runNode(name, ['--import', 'tsx', 'packages/site/test/helpers/stream-site.ts'], {
        env: { MANDATE_URL: mandate.url, SITE_ID: SITE, PUBLIC_BASE_URL: url, PORT: String(sitePort), REV_TTL_SEC: String(REV_TTL_SEC), REVOCATION: revocation },
      });
      await child.waitFor('stream site listening', 60_000);
      return { child, url };
    };
    ({ child: site, url: siteUrl } = await startSite('stream site', 'stream'));
    ({ child: pollSite, url: pollUrl } = await startSite('poll site', 'poll'));
    owner = await HttpOwner.signUp(mandate, mandate.baseUrl, { label: 'stream-real' });
  });
  after(async () => {
    console.log(`site followed the owner's changes in: ${measured.join('; ')}`);
    await site?.stop();
    await pollSite?.stop();
    await mandate?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const status = async (): Promise<VerifierStatus> => (await (await fetch(`${siteUrl}/status`)).json()) as VerifierStatus;
  const via = (v: VerifierStatus['revocationVia'], ms = 30_000) =>
    until(`the site's revocations via ${v ?? ''}`, async () => ((await status()).revocationVia === v ? true : undefined), { ms, describe: logs });

  type Holder = { agent: RemoteAgent; pass: string };
  const pass = async (agent: RemoteAgent): Promise<string> => expectStatus(await remoteToken(mandate, agent, SITE), 200, 'pass').body.access_token;
  /** A new agent of the owner with approved access at the site and a pass. */
  async function access(name: string): Promise<Holder> {
    const agent = await remoteAgent(mandate, owner, name);
    await remoteGrant(mandate, owner, agent, SITE);
    return { agent, pass: await pass(agent) };
  }
  /** The site's answer to the agent's GET /orders: `200`, or the status and error code. */
  async function ask(h: Holder, base = siteUrl): Promise<string> {
    const url = `${base}/orders`;
    const res = await fetch(url, { headers: { authorization: `DPoP ${h.pass}`, dpop: await h.agent.proof(h.pass, url) } });
    const body = (await res.json()) as { error?: string };
    return res.status === 200 ? '200' : `${res.status} ${body.error ?? ''}`;
  }
  /** Asks every 100 ms from now until the answer is no longer `from`; the new answer and how long it took. */
  async function followed(what: string, h: Holder, from: string): Promise<string> {
    const start = Date.now();
    let last = from;
    const answer = await until(`the site to stop answering ${from} (${what})`, async () => {
      last = await ask(h);
      return last === from ? undefined : last;
    }, { ms: REFUSED_WITHIN_MS, everyMs: 100, describe: () => `last answer ${last}${logs()}` });
    measured.push(`${what} ${Date.now() - start} ms`);
    return answer;
  }

  /** Waits until the site holds `revSeq` (the list after the owner's change); how long it took is logged. */
  async function caughtUp(what: string, revSeq: number): Promise<void> {
    const start = Date.now();
    await until(`the site to hold rev_seq ${revSeq} (${what})`, async () => ((await status()).revSeq === revSeq ? true : undefined), { ms: REFUSED_WITHIN_MS, everyMs: 100, describe: logs });
    measured.push(`${what} ${Date.now() - start} ms`);
  }

  it('starts on the stream', async () => {
    await via('stream');
    assert.equal((await status()).ready, true);
  });

  it('an agent the owner revokes is refused as soon as the delta arrives; unblocking it lifts that', async () => {
    const a = await access('Revoked then unblocked');
    assert.equal(await ask(a), '200');
    await owner.flag(a.agent.id, 'revoked');
    assert.equal(await followed('agent revoked', a, '200'), '401 agent_revoked');
    assert.equal(await ask(a, pollUrl), '200', 'the polling control still accepts it: the stream made the difference');
    assert.equal((await (await fetch(`${pollUrl}/status`)).json() as VerifierStatus).revocationVia, 'polling');
    // Unblocking advances rev_seq; the agent's entry stays listed for one pass lifetime, so passes
    // minted before the block stay refused while passes minted after it pass (agents.ts setFlag). The
    // revocation had ended its grants: access is asked and approved again.
    const held = (await status()).revSeq ?? 0;
    await owner.flag(a.agent.id, 'ok');
    const list = expectStatus(await call<{ rev_seq: number }>(mandate, 'GET', '/api/v1/revocation'), 200, 'list').body;
    assert.ok(list.rev_seq > held, 'unblocking advanced rev_seq');
    await caughtUp('agent unblocked', list.rev_seq);
    await remoteGrant(mandate, owner, a.agent, SITE);
    assert.equal(await ask({ agent: a.agent, pass: await pass(a.agent) }), '200', 'a pass minted after the unblock');
    assert.equal(await ask(a), '401 agent_revoked', 'the pass minted before the block stays refused');
    assert.equal((await status()).revocationVia, 'stream', 'no poll was needed');
  });

  it('a grant the owner revokes is refused as soon as the delta arrives; approving again lifts it for new passes', async () => {
    const a = await access('Grant revoked');
    assert.equal(await ask(a), '200');
    const grant = (await owner.grants()).find((g) => g.agent_id === a.agent.id && g.site === SITE);
    assert.ok(grant, 'the grant is listed');
    await owner.ok('POST', `/api/grants/${grant.id}/revoke`);
    assert.equal(await followed('grant revoked', a, '200'), '401 grant_revoked');
    assert.equal(await ask(a, pollUrl), '200', 'the polling control still accepts it');
    await remoteGrant(mandate, owner, a.agent, SITE);
    const fresh = { agent: a.agent, pass: await pass(a.agent) };
    assert.equal(await ask(fresh), '200', 'a pass of the new grant');
    assert.equal(await ask(a), '401 grant_revoked', 'the old pass stays refused');
  });

  it('the service killed mid-stream: the site polls meanwhile, resumes the stream when a new process is back, and follows changes at once again', async () => {
    const before = await access('Holds a pass across the outage');
    const connected = (await status()).revSeq;
    await mandate.kill('SIGKILL');
    await via('polling', 10_000);
    // The held list is still within max_stale: the site goes on answering while Mandate is away.
    assert.equal(await ask(before), '200');

    mandate = await startMandate(); // same data dir, same port: the site's serviceUrl is unchanged
    const down = Date.now();
    await via('stream', 60_000);
    measured.push(`stream resumed ${Date.now() - down} ms after the new process was healthy`);
    assert.equal((await status()).revSeq, connected, 'nothing changed while it was down');

    assert.equal(await ask(before), '200');
    await owner.flag(before.agent.id, 'revoked');
    assert.equal(await followed('agent revoked after the restart', before, '200'), '401 agent_revoked');
    const b = await access('Grant revoked after the restart');
    assert.equal(await ask(b), '200');
    const grant = (await owner.grants()).find((g) => g.agent_id === b.agent.id);
    await owner.ok('POST', `/api/grants/${grant?.id ?? ''}/revoke`);
    assert.equal(await followed('grant revoked after the restart', b, '200'), '401 grant_revoked');
    assert.equal((await status()).revocationVia, 'stream');
  });
});
