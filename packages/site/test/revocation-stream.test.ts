import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { createVerifier, mcpAuth, type Verifier, type VerifierOptions, type VerifyResult } from '../src/index.ts';
import { type StandIn, startStandIn } from './helpers/revocation-events.ts';
import { serviceKey, stubAgent, stubRequest, type StubAgent } from './helpers/stub-service.ts';

// Local mode following the revocation event stream (decisions §30), against a stand-in that speaks it.

const SITE = 'shop.example';
const BASE = 'https://shop.example';
const outcome = (r: VerifyResult) => (r.ok ? 'ok' : `${r.status} ${r.error}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits (real time) until `check` holds, at most `ms`. */
async function until(check: () => boolean | Promise<boolean>, ms = 3000, what = 'the condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what} did not hold within ${ms} ms`);
    await sleep(5);
  }
}

describe('local mode: the revocation stream', () => {
  let s: StandIn;
  let nowMs: number;
  let errors: Error[];
  let verifiers: Verifier[];
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  const nowSec = () => Math.floor(nowMs / 1000);

  before(() => process.on('unhandledRejection', onUnhandled));
  after(() => {
    process.off('unhandledRejection', onUnhandled);
    assert.deepEqual(unhandled, [], 'no unhandled rejections');
  });
  beforeEach(async () => {
    nowMs = Date.now();
    s = await startStandIn({ nowSec });
    errors = [];
    verifiers = [];
  });
  afterEach(async () => {
    for (const v of verifiers) v.close();
    await s.close();
  });

  function verifier(over: Partial<VerifierOptions> = {}): Verifier {
    // rev_ttl of an hour: anything refused within the test came by the stream, not a poll.
    const v = createVerifier({ mode: 'local', serviceUrl: s.url, site: SITE, publicBaseUrl: BASE, revTtlSec: 3600, now: () => nowMs, onError: (e) => errors.push(e), ...over });
    verifiers.push(v);
    return v;
  }
  const request = (agent: StubAgent) => stubRequest(s.key, agent, { issuer: s.url, site: SITE, base: BASE, nowSec: nowSec() });
  const verdict = async (v: Verifier, agent: StubAgent) => outcome(await v.verify(await request(agent)));
  async function connected(over: Partial<VerifierOptions> = {}): Promise<Verifier> {
    const v = verifier(over);
    await v.start();
    await until(() => v.status().revocationVia === 'stream', 3000, 'the stream in step');
    return v;
  }

  it('follows the stream: a revoked agent is refused as soon as the delta arrives, a removal lifts it; no polling meanwhile', async () => {
    const agent = await stubAgent();
    const other = await stubAgent();
    const v = await connected();
    assert.equal(s.connections.length, 1);
    assert.equal(s.connections[0]?.lastEventId, '1', 'opened from the list loaded at start');
    assert.equal(await verdict(v, agent), 'ok');

    const t = Date.now();
    await s.revoke(agent.id);
    await until(async () => (await verdict(v, agent)) === '401 agent_revoked', 1000, 'the refusal');
    assert.ok(Date.now() - t < 1000);
    assert.equal(await verdict(v, other), 'ok', 'only that agent');
    assert.equal(v.status().revSeq, 2);

    await s.unrevoke(agent.id);
    await until(async () => (await verdict(v, agent)) === 'ok', 1000, 'the refusal lifted');
    assert.equal(v.status().revSeq, 3);
    assert.equal(s.snapshotGets, 1, 'only the start-up load: the stream brought the rest');
    assert.deepEqual(errors, []);
  });

  it('opens with a snapshot event when it holds no list yet, and verifies it', async () => {
    const agent = await stubAgent();
    await s.revokeSilently(agent.id);
    // The first GET fails (timeout) so the stream's snapshot is the first list held.
    const v = verifier({
      fetch: (input, init) => (String(input).endsWith('/api/v1/revocation') ? Promise.reject(new Error('down')) : fetch(input, init)),
    });
    await assert.rejects(v.start(), /unreachable/);
    await until(() => v.status().revocationVia === 'stream', 3000, 'the stream in step');
    assert.equal(s.connections[0]?.lastEventId, undefined);
    assert.equal(v.status().revSeq, 2);
    assert.equal(await verdict(v, agent), '401 agent_revoked');
  });

  it('a gap (a delta that does not follow the held list) fetches a snapshot and goes on', async () => {
    const agent = await stubAgent();
    const v = await connected();
    await s.revokeSilently(agent.id); // rev_seq 2, never sent
    const later = await stubAgent();
    const missed = await s.revokeSilently(later.id); // rev_seq 3
    s.sendRaw(await s.sign(missed)); // 2 -> 3 while the verifier holds 1
    await until(async () => (await verdict(v, agent)) === '401 agent_revoked', 1000, 'the missed change applied');
    assert.equal(await verdict(v, later), '401 agent_revoked');
    assert.equal(s.snapshotGets, 2, 'one snapshot fetched for the gap');
    assert.equal(v.status().revSeq, 3);
    assert.equal(v.status().revocationVia, 'stream');
  });

  it('a delta that does not verify is not applied (a snapshot is fetched instead); nor one from another issuer', async () => {
    const agent = await stubAgent();
    const v = await connected();
    const forger = await serviceKey('k1'); // same kid, another key
    const forged = { type: 'revocation-delta' as const, iss: s.url, iat: nowSec(), rev_seq: 2, prev_seq: 1, added: { revoked_agents: [{ id: agent.id, flag: 'revoked' as const, rev_seq: 2 }], revoked_grants: [] }, removed: { revoked_agents: [], revoked_grants: [] } };
    s.sendRaw(await s.sign(forged, forger));
    await until(() => s.snapshotGets === 2, 1000, 'a snapshot fetched');
    assert.equal(await verdict(v, agent), 'ok', 'the forged revocation was not applied');
    assert.equal(v.status().revSeq, 1);
    assert.ok(errors.some((e) => /revocation stream: delta ignored/.test(e.message)), errors.join());

    s.sendRaw(await s.sign({ ...forged, iss: 'https://elsewhere.example' }));
    s.sendRaw('not-a-jwt');
    await until(() => s.snapshotGets === 4, 1000, 'a snapshot fetched for each');
    assert.equal(await verdict(v, agent), 'ok');
    assert.equal(v.status().revSeq, 1);
  });

  it('keep-alives keep the list fresh past max_stale; without them it goes stale', async () => {
    const agent = await stubAgent();
    const v = await connected({ revTtlSec: 10, maxStaleSec: 40 });
    nowMs += 35_000;
    s.keepAlive();
    await until(() => v.status().revocationAgeSec === 0, 1000, 'the keep-alive counted');
    nowMs += 35_000; // 70 s after the list was signed, 35 s after the keep-alive
    assert.equal(await verdict(v, agent), 'ok');
    assert.equal(v.status().ready, true);
    nowMs += 6_000; // 41 s without a keep-alive
    assert.equal(await verdict(v, agent), '503 revocation_stale');
    assert.equal(v.status().ready, false);
    s.keepAlive();
    await until(() => v.status().ready, 1000, 'fresh again');
    assert.equal(await verdict(v, agent), 'ok');
  });

  it('a stream quiet for longer than revTtlSec (keep-alives sparser than this verifier polls) does not stop the polls', async () => {
    const agent = await stubAgent();
    // Polls every second; the stand-in sends no keep-alive: its stream is in step but says nothing.
    const v = await connected({ revTtlSec: 1, maxStaleSec: 10 });
    const before = s.snapshotGets;
    nowMs += 5_000; // the list held is 5 s old: older than revTtlSec
    await until(() => s.snapshotGets > before, 5000, 'a poll although the stream is in step');
    await until(() => (v.status().revocationAgeSec ?? Infinity) < 5, 3000, 'the polled list is the fresh one');
    nowMs += 8_000; // 13 s after the list first held: fresh only because of the polls
    await until(async () => (await verdict(v, agent)) === 'ok', 5000, 'never stale while polls keep it fresh');
    assert.equal(v.status().revocationVia, 'stream', 'still following the stream');
  });

  it('a keep-alive does not count while the held list is behind the stream (a gap with no snapshot to be had)', async () => {
    const agent = await stubAgent();
    let snapshotsDown = false;
    const v = await connected({
      revTtlSec: 10,
      maxStaleSec: 40,
      fetch: (input, init) => (snapshotsDown && String(input).endsWith('/api/v1/revocation') ? Promise.reject(new Error('down')) : fetch(input, init)),
    });
    snapshotsDown = true;
    await s.revokeSilently(agent.id);
    s.sendRaw(await s.sign(await s.revokeSilently((await stubAgent()).id)));
    await until(() => errors.some((e) => /no snapshot could be fetched/.test(e.message)), 1000, 'the failed catch-up reported');
    assert.equal(v.status().revocationVia, 'polling');
    nowMs += 41_000;
    s.keepAlive(); // to a stream since dropped, or one not in step: either way no freshness
    await sleep(50);
    assert.equal(await verdict(v, agent), '503 revocation_stale');
  });

  it('a service without the stream (404): polls every revTtlSec, retries the stream backing off, and follows it once offered', async () => {
    s.eventsStatus = 404;
    const agent = await stubAgent();
    // Polling on a real timer, on the test's clock (still): max_stale is not what is tested here.
    const v = verifier({ revTtlSec: 0.05, maxStaleSec: 3600 });
    await v.start();
    await until(() => s.snapshotGets >= 4, 2000, 'polling');
    assert.equal(v.status().revocationVia, 'polling');
    assert.ok(errors.some((e) => /revocation\/events answered 404: polling instead/.test(e.message)), errors.join());
    await s.revokeSilently(agent.id);
    await until(async () => (await verdict(v, agent)) === '401 agent_revoked', 1000, 'the poll brought the revocation');

    // Retried after 10 x rev_ttl (0.5 s, jittered), then 1 s...: a few tries, not one per poll.
    await until(() => s.connections.length >= 2, 3000, 'a retry of the stream');
    const polls = s.snapshotGets;
    assert.ok(s.connections.length * 2 <= polls, `${s.connections.length} stream tries for ${polls} polls`);

    s.eventsStatus = 200;
    await until(() => v.status().revocationVia === 'stream', 5000, 'the stream followed once offered');
    const atConnect = s.snapshotGets;
    await sleep(300);
    assert.ok(s.snapshotGets <= atConnect + 1, 'polling paused while the stream is in step');
    const other = await stubAgent();
    await s.revoke(other.id);
    await until(async () => (await verdict(v, other)) === '401 agent_revoked', 1000, 'by the stream');
  });

  it('a node at its maximum of streams (503 with Retry-After): polls meanwhile, tries the stream again no sooner than Retry-After, follows it once let in', async () => {
    s.eventsStatus = 503;
    s.eventsRetryAfter = '1';
    const agent = await stubAgent();
    const v = verifier({ revTtlSec: 0.05, maxStaleSec: 3600 });
    await v.start();
    await until(() => s.snapshotGets >= 4, 2000, 'polling');
    assert.equal(v.status().revocationVia, 'polling');
    assert.ok(errors.some((e) => /revocation\/events answered 503: polling instead \(the stream again in 1 s or later\)/.test(e.message)), errors.join());
    await s.revokeSilently(agent.id);
    await until(async () => (await verdict(v, agent)) === '401 agent_revoked', 1000, 'the poll brought the revocation');

    // Without Retry-After a broken stream is tried again after 125 to 250 ms; here not before 1 s.
    await until(() => s.connections.length >= 2, 3000, 'a retry of the stream');
    const [first, second] = s.connections;
    assert.ok(first && second && second.at - first.at >= 950, `tried again after ${(second?.at ?? 0) - (first?.at ?? 0)} ms`);

    s.eventsStatus = 200;
    await until(() => v.status().revocationVia === 'stream', 5000, 'the stream followed once let in');
    const other = await stubAgent();
    await s.revoke(other.id);
    await until(async () => (await verdict(v, other)) === '401 agent_revoked', 1000, 'by the stream');
  });

  it('a stream that ends mid-way is resumed with Last-Event-ID; the changes missed meanwhile come as deltas', async () => {
    const first = await stubAgent();
    const second = await stubAgent();
    const v = await connected();
    await s.revoke(first.id);
    await until(() => v.status().revSeq === 2, 1000, 'the first delta');
    s.endStreams();
    await s.revokeSilently(second.id); // while no stream is open
    await until(() => s.connections.length === 2 && s.open() === 1, 3000, 'the stream reopened');
    assert.equal(s.connections[1]?.lastEventId, '2', 'resumed from the rev_seq held');
    await until(async () => (await verdict(v, second)) === '401 agent_revoked', 1000, 'the missed change');
    assert.equal(await verdict(v, first), '401 agent_revoked');
    assert.equal(s.snapshotGets, 1, 'resumed by deltas, no snapshot needed');
    assert.equal(v.status().revocationVia, 'stream');
  });

  it('close() ends the stream and nothing runs after it: no reconnect, no poll', async () => {
    const v = await connected({ revTtlSec: 0.05 });
    assert.equal(s.open(), 1);
    s.endStreams(); // a reconnect is now scheduled
    v.close();
    await sleep(1500); // longer than the reconnect backoff and many rev_ttl
    assert.equal(s.connections.length, 1, 'no reconnect after close');
    assert.equal(s.snapshotGets, 1, 'no poll after close');

    const w = await connected({ revTtlSec: 0.05 });
    const gets = s.snapshotGets;
    w.close();
    await until(() => s.open() === 0, 1000, 'the server saw the stream closed');
    await sleep(300);
    assert.equal(s.snapshotGets, gets);
    assert.equal(s.connections.length, 2);
  });

  it("revocation: 'poll' never opens the stream; a bad value throws at start-up", async () => {
    const v = verifier({ revocation: 'poll' });
    await v.start();
    await sleep(100);
    assert.equal(s.connections.length, 0);
    assert.equal(v.status().revocationVia, 'polling');
    assert.throws(() => createVerifier({ mode: 'local', serviceUrl: s.url, site: SITE, revocation: 'push' as 'poll' }), /revocation must be 'stream' or 'poll'/);
  });

  it('mcpAuth in local mode follows the same stream (its resource passes use the same revocation index) and closes it', async () => {
    const mandate = mcpAuth({ service: s.url, resource: 'https://notes.example/mcp', scopes: ['notes:read'], mode: 'local', now: () => nowMs, onError: (e) => errors.push(e) });
    try {
      await mandate.start();
      await until(() => s.open() === 1, 3000, 'the stream opened');
      assert.equal(s.connections[0]?.lastEventId, '1');
      assert.equal(mandate.status().ready, true);
    } finally {
      mandate.close();
    }
    await until(() => s.open() === 0, 1000, 'the stream closed');
  });
});
