import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyRevocationDelta, type RevocationClaims, type ServiceKeys, type RevocationDeltaClaims, verifyRevocationDelta, verifyRevocationSnapshot } from '@mandate/protocol';
import { HttpOwner, call, expectStatus, remoteAgent, remoteGrant } from './helpers/over-http.ts';
import { freePort, startServer, type ServerProcess } from './helpers/server-process.ts';
import { SseClient } from './helpers/sse-client.ts';
import { until } from './helpers/until.ts';

// The revocation event stream (decisions §30) against the real server process: the snapshot, then one
// delta per change, each verified with the JWKS and applied to the list held, which must then be
// exactly what GET /api/v1/revocation serves; resuming with Last-Event-ID; keep-alive; the metrics.

/** Deltas the node holds for resuming (REVOCATION_HELD_DELTAS): fewer than the test makes. */
const HELD = 3;
type Snapshot = { signature: string; rev_seq: number; revoked_agents: unknown[]; revoked_grants: unknown[] };
const sorted = (l: unknown[]) => l.map((e) => JSON.stringify(e)).sort();
const content = (l: { rev_seq: number; revoked_agents: unknown[]; revoked_grants: unknown[] }) => ({ rev_seq: l.rev_seq, agents: sorted(l.revoked_agents), grants: sorted(l.revoked_grants) });

describe('GET /api/v1/revocation/events (sqlite, one node)', { timeout: 180_000 }, () => {
  let n: ServerProcess;
  let metricsUrl: string;
  const clients: SseClient[] = [];
  const open = (query = '', headers: Record<string, string> = {}) => {
    const c = new SseClient(`${n.url}/api/v1/revocation/events${query}`, headers);
    clients.push(c);
    return c;
  };
  before(async () => {
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    n = await startServer({ name: 'revocation-events', env: { REVOCATION_KEEPALIVE_MS: '300', REVOCATION_HELD_DELTAS: String(HELD), METRICS_PORT: String(port) } });
  });
  after(async () => {
    for (const c of clients) c.close();
    await n?.stop();
  });
  const keys = async () => expectStatus(await call<ServiceKeys>(n, 'GET', '/api/v1/jwks'), 200, 'jwks').body;
  const served = async () => expectStatus(await call<Snapshot>(n, 'GET', '/api/v1/revocation'), 200, 'snapshot').body;
  const now = () => Math.floor(Date.now() / 1000);
  const metric = async (name: string) => {
    const text = await (await fetch(metricsUrl)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  };

  let first: SseClient;
  let snapshotId = '';
  const deltaTexts: string[] = [];
  const deltaIds: string[] = [];

  it('opens with the snapshot, then one verified delta per change, which applied to the list gives what GET serves', async () => {
    first = open();
    await first.opened;
    assert.equal(first.status, 200);
    assert.match(String(first.headers['content-type']), /^text\/event-stream/);
    assert.equal(first.headers['cache-control'], 'no-store');
    const opening = await until('the snapshot event', () => first.events.find((e) => e.event === 'snapshot'), { ms: 10_000 });
    assert.equal(first.events[0], opening, 'the snapshot comes first');
    const body = JSON.parse(opening.data ?? '') as Snapshot;
    assert.equal(opening.id, String(body.rev_seq));
    assert.ok(!opening.data?.includes('\n'), 'one line');
    snapshotId = opening.id ?? '';
    let list: RevocationClaims = await verifyRevocationSnapshot(body.signature, { keys: await keys(), issuer: n.baseUrl, now: now() });
    assert.deepEqual(content(list), content(await served()));

    const owner = await HttpOwner.signUp(n, n.baseUrl, { label: 'stream' });
    const a = await remoteAgent(n, owner, 'Shopper');
    const b = await remoteAgent(n, owner, 'Browser');
    await remoteGrant(n, owner, a, 'shop.example');
    const grantId = (await owner.grants()).find((g) => g.agent_id === a.id)?.id;
    const seen = new Set<string>();
    let removedSeen = 0;
    // Each change: wait for the delta to the rev_seq GET now serves, verify it, apply it, compare.
    const change = async (what: string, act: () => Promise<void>) => {
      await act();
      const target = (await served()).rev_seq;
      assert.ok(target > list.rev_seq, `${what} advanced rev_seq`);
      for (;;) {
        const e = await until(`a delta after rev_seq ${list.rev_seq} (${what})`, () => first.named('delta').find((d) => !seen.has(d.id ?? '')), { ms: 10_000, everyMs: 20 });
        seen.add(e.id ?? '');
        deltaTexts.push(e.data ?? '');
        deltaIds.push(e.id ?? '');
        const delta: RevocationDeltaClaims = await verifyRevocationDelta(e.data, { keys: await keys(), issuer: n.baseUrl, now: now() });
        assert.equal(e.id, String(delta.rev_seq));
        assert.equal(delta.prev_seq, list.rev_seq, 'each delta follows the one before');
        removedSeen += delta.removed.revoked_agents.length + delta.removed.revoked_grants.length;
        list = applyRevocationDelta(list, delta);
        if (delta.rev_seq >= target) break;
      }
      assert.deepEqual(content(list), content(await served()), `after ${what}`);
    };
    await change('a grant revoked', async () => {
      expectStatus(await call(n, 'POST', `/api/grants/${grantId}/revoke`, {}, owner.auth), 200, 'revoke');
    });
    await change('an agent blocked', () => owner.flag(a.id, 'revoked'));
    await change('an agent flagged suspicious', () => owner.flag(b.id, 'suspicious'));
    await change('the flag lifted', () => owner.flag(b.id, 'ok'));
    assert.ok(removedSeen > 0, 'a lifted flag is a removed entry');
    assert.ok(!first.ended);
  });

  it('resumes with Last-Event-ID (header or query) from the deltas held, and gives a snapshot for an id it does not hold', async () => {
    assert.ok(deltaIds.length > HELD, 'more deltas than held');
    // The oldest delta held follows this id.
    const resumeAt = deltaIds[deltaIds.length - HELD - 1] ?? '';
    const viaHeader = open('', { 'last-event-id': resumeAt });
    const viaQuery = open(`?last_event_id=${resumeAt}`);
    for (const c of [viaHeader, viaQuery]) {
      await until('the deltas replayed', () => (c.named('delta').length >= HELD ? true : undefined), { ms: 10_000 });
      assert.equal(c.named('snapshot').length, 0, 'no snapshot when the deltas are held');
      assert.deepEqual(c.named('delta').map((e) => e.data), deltaTexts.slice(-HELD), 'the same deltas, in order');
    }
    const current = (await served()).rev_seq;
    const upToDate = open('', { 'last-event-id': String(current) });
    await until('a keep-alive', () => upToDate.events.find((e) => e.comment !== undefined), { ms: 10_000 });
    assert.equal(upToDate.events.filter((e) => e.event !== undefined).length, 0, 'nothing to send to a client at the head');
    // The snapshot's id: the deltas from there are no longer all held.
    const tooOld = open('', { 'last-event-id': snapshotId });
    const e = await until('a snapshot for an id not held', () => tooOld.events.find((x) => x.event !== undefined), { ms: 10_000 });
    assert.equal(e.event, 'snapshot');
    assert.equal(e.id, String(current));
    for (const bad of ['?last_event_id=abc', '?last_event_id=-1', '?last_event_id=1e3']) {
      const r = await call<{ detail: string }>(n, 'GET', `/api/v1/revocation/events${bad}`);
      assert.equal(r.status, 400, bad);
      assert.match(r.body.detail, /Last-Event-ID/);
    }
    const r = await call<{ detail: string }>(n, 'GET', '/api/v1/revocation/events', undefined, { 'last-event-id': 'x' });
    assert.equal(r.status, 400);
  });

  it('sends a keep-alive comment with the time at the configured interval', async () => {
    const c = open();
    const k = await until('two keep-alives', () => { const ks = c.events.filter((e) => e.comment !== undefined); return ks.length >= 2 ? ks : undefined; }, { ms: 10_000 });
    assert.match(k[0]?.comment ?? '', /^keep-alive \d{4}-\d\d-\d\dT[\d:.]+Z$/);
  });

  it('counts the open streams and the deltas sent in /metrics', async () => {
    const live = clients.filter((c) => !c.ended).length;
    await until('the gauge to count the open streams', async () => ((await metric('mandate_revocation_streams')) === live ? true : undefined), { ms: 10_000 });
    assert.ok(((await metric('mandate_revocation_deltas_sent_total')) ?? 0) >= deltaTexts.length);
    for (const c of clients) c.close();
    await until('the gauge back to 0', async () => ((await metric('mandate_revocation_streams')) === 0 ? true : undefined), { ms: 10_000 });
  });
});
