import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { HttpOwner, call, expectStatus, remoteAccessRequest, remoteAgent, remoteDecide, type RemoteAgent, type Target } from '../helpers/over-http.ts';
import { freshPostgresDatabase } from '../helpers/postgres.ts';
import { startServer, type ServerProcess } from '../helpers/server-process.ts';
import { startPushService, type PushServiceStandIn, type SubscriptionJson } from '../helpers/stand-ins/push-service.ts';
import { sleep, until } from '../helpers/until.ts';

// Push delivery (decisions §13) from two real server processes over one PostgreSQL database, to a
// push-service stand-in that decrypts every message and checks its VAPID signature. Each node runs
// an outbox worker; a message is claimed by one node at a time (OUTBOX_CLAIM_SECONDS=10 here, the least allowed), so
// every device gets each message once, and a node killed mid-send loses nothing: the other node
// sends the message when the dead node's claim runs out. A device its push service calls gone (410)
// is removed and sent nothing more.

const CLAIM_MS = 10_000;
const NODE_ENV = { OUTBOUND_ALLOW_LOOPBACK: 'true', OUTBOX_POLL_MS: '100', OUTBOX_CLAIM_SECONDS: String(CLAIM_MS / 1000) };
const AGENTS = 10;
/** Requests the owner approves (through node B), denies (through node A), and leaves open. */
const APPROVED = [0, 1, 2, 3];
const DENIED = [4, 5, 6, 7];
const OPEN = [8, 9];
const LIFETIME_MS = 300_000;
/** After everything expected arrived, how long to keep watching for a duplicate. */
const QUIET_MS = 1_000;

type Payload = { type?: string; id?: string; title?: string; body?: string; url?: string; kind?: string; txn_id?: string; expires_at?: string };
type DeviceOut = { id: string; kind: string; name: string; last_used_at: string | null };
type NotificationOut = { id: string; type: string; title: string; read_at: string | null; txn_id?: string };
type OutboxRow = { device_id: string; locked_by: string | null; locked_until: string | null; sent_at: string | null; failed_at: string | null; attempts: number; last_error: string | null };
interface Device {
  name: string;
  sub: SubscriptionJson;
  id: string;
}

const site = (i: number): string => `shop${i}.example`;

describe('push notifications from two nodes over one PostgreSQL database', { timeout: 120_000 }, () => {
  let db: { url: string; drop: () => Promise<void> } | undefined;
  let dataDir = '';
  let push: PushServiceStandIn | undefined;
  let sql: pg.Client | undefined;
  let nodeA: ServerProcess | undefined;
  let nodeB: ServerProcess | undefined;
  let owner: HttpOwner;
  const devices: Device[] = [];
  const agents: RemoteAgent[] = [];
  /** The node left running after the second test killed the other. */
  let survivor: ServerProcess | undefined;

  const A = (): ServerProcess => nodeA ?? assert.fail('node A is not running');
  const B = (): ServerProcess => nodeB ?? assert.fail('node B is not running');
  const ps = (): PushServiceStandIn => push ?? assert.fail('no push service');
  const device = (name: string): Device => devices.find((d) => d.name === name) ?? assert.fail(`no device ${name}`);
  const nodeFor = (i: number): ServerProcess => (i % 2 === 0 ? A() : B());
  const received = (d: Device, type?: string): Payload[] => ps().received(d.sub).map((p) => p as Payload).filter((p) => type === undefined || p.type === type);
  const diag = (): string =>
    [nodeA, nodeB].map((n) => (n ? `--- ${n.name} (${n.alive() ? 'alive' : 'dead'})\n${n.logs().slice(-4000)}` : '')).join('\n') +
    `\n--- push service: ${ps().requests} requests, rejections ${JSON.stringify(ps().rejections)}\n` +
    devices.map((d) => `${d.name}: ${JSON.stringify(received(d).map((p) => `${p.type}:${p.txn_id ?? p.title}`))}`).join('\n');
  const outboxRows = async (where: string, params: unknown[]): Promise<OutboxRow[]> =>
    (await (sql ?? assert.fail('no database client')).query<OutboxRow>(`SELECT device_id, locked_by, locked_until, sent_at, failed_at, attempts, last_error FROM outbox WHERE ${where} ORDER BY id`, params)).rows;
  const listDevices = async (node: Target): Promise<DeviceOut[]> => expectStatus(await call<DeviceOut[]>(node, 'GET', '/api/devices', undefined, owner.auth), 200, 'GET /api/devices').body;
  const ask = async (node: Target, agent: RemoteAgent, host: string): Promise<string> => expectStatus(await remoteAccessRequest(node, agent, host), 200, `access request for ${host}`).body.txn_id;

  /** Each (device, txn) pair's first sighting of a push of `type`, polled every 20 ms; fails after `ms`. */
  async function firstSeen(type: string, txns: readonly string[], on: readonly Device[], ms: number): Promise<Map<string, number>> {
    const seen = new Map<string, number>();
    await until(`a ${type} push for each of ${txns.length} requests on ${on.map((d) => d.name).join(', ')}`, () => {
      const now = Date.now();
      for (const d of on) {
        const got = new Set(received(d, type).map((p) => p.txn_id));
        for (const t of txns) if (got.has(t) && !seen.has(`${d.name} ${t}`)) seen.set(`${d.name} ${t}`, now);
      }
      return seen.size === txns.length * on.length ? true : undefined;
    }, { ms, everyMs: 20, describe: diag });
    return seen;
  }

  /** No device got the same message twice: (type, notification id) is unique on each. */
  function assertNoDuplicates(): void {
    for (const d of devices) {
      const keys = received(d).map((p) => `${p.type} ${p.id}`);
      assert.equal(new Set(keys).size, keys.length, `${d.name} got a message twice: ${JSON.stringify(keys)}`);
    }
  }

  before(async () => {
    db = await freshPostgresDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'mandate-push-multinode-'));
    push = await startPushService();
    const env = { ...NODE_ENV, DATABASE_URL: db.url, DATA_DIR: dataDir };
    // A first: it creates the schema, the signing key and the VAPID keys; B finds them. One public
    // base URL for both (A's), as behind a load balancer: passkeys are bound to it.
    nodeA = await startServer({ name: 'node A', env });
    nodeB = await startServer({ name: 'node B', env: { ...env, BASE_URL: nodeA.baseUrl } });
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  });

  after(async () => {
    await Promise.all([nodeA?.stop(), nodeB?.stop()]);
    await push?.close();
    await sql?.end();
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it(`${AGENTS} requests through both nodes: one approval per request on every device, one dismiss per answer`, async (t) => {
    // One VAPID key pair for the deployment; the stand-in refuses pushes signed with any other.
    const keyA = expectStatus(await call<{ vapid_public_key: string }>(A(), 'GET', '/api/push/keys'), 200, 'keys on A').body.vapid_public_key;
    const keyB = expectStatus(await call<{ vapid_public_key: string }>(B(), 'GET', '/api/push/keys'), 200, 'keys on B').body.vapid_public_key;
    assert.equal(keyA, keyB, 'both nodes publish the same VAPID key');
    ps().expectVapidKey(keyA);

    owner = await HttpOwner.signUp(A(), A().baseUrl, { label: 'push-multi' });
    for (const [name, via] of [['phone', A()], ['laptop', B()], ['tablet', A()]] as const) {
      const sub = ps().newSubscription(name);
      const r = expectStatus(await call<{ device_id: string }>(via, 'POST', '/api/push', { ...sub, expirationTime: null, name }, owner.auth), 200, `subscribe the ${name} through ${via.name}`);
      devices.push({ name, sub, id: r.body.device_id });
    }
    const listed = await listDevices(B());
    assert.deepEqual(listed.filter((d) => d.kind === 'webpush').map((d) => d.id).sort(), devices.map((d) => d.id).sort());
    assert.equal(listed.filter((d) => d.kind === 'passkey').length, 1);

    for (let i = 0; i < AGENTS; i++) agents.push(await remoteAgent(nodeFor(i), owner, `Agent ${i}`));

    // Half the requests through each node, all at once.
    const askedAt = Date.now();
    const txns = await Promise.all(agents.map((agent, i) => ask(nodeFor(i), agent, site(i))));
    const createdAt = Date.now();
    const approvalSeen = await firstSeen('approval', txns, devices, 15_000);
    const fanOutMs = Math.max(...approvalSeen.values()) - createdAt;
    await sleep(QUIET_MS);

    const idOf = new Map<string, string>();
    for (const d of devices) {
      const approvals = received(d, 'approval');
      assert.equal(approvals.length, AGENTS, `${d.name}: ${AGENTS} approvals, none twice: ${JSON.stringify(approvals.map((p) => p.txn_id))}`);
      txns.forEach((txn, i) => {
        const mine = approvals.filter((p) => p.txn_id === txn);
        assert.equal(mine.length, 1, `${d.name}: one approval for request ${i}`);
        const p = mine[0]!;
        assert.equal(p.type, 'approval');
        assert.equal(p.kind, 'access');
        assert.equal(p.title, `Agent ${i} asks for access to ${site(i)}`);
        assert.equal(p.body, 'Wants: orders:read');
        assert.equal(p.url, `/app#requests/${txn}`);
        const expires = Date.parse(p.expires_at ?? '');
        assert.ok(expires >= askedAt + LIFETIME_MS - 1000 && expires <= createdAt + LIFETIME_MS + 1000, `${d.name}: expires_at ${p.expires_at} is 300 s after the request`);
        assert.match(p.id ?? '', /^n_/);
        // One notification per request: every device carries its id.
        if (!idOf.has(txn)) idOf.set(txn, p.id ?? '');
        assert.equal(p.id, idOf.get(txn), `${d.name}: the notification id of request ${i}`);
      });
    }
    for (const delivery of ps().all().filter((x) => (x.payload as Payload).type === 'approval')) {
      assert.equal(delivery.urgency, 'high');
      assert.equal(delivery.topic, (delivery.payload as Payload).txn_id);
      assert.ok(delivery.ttl > 0 && delivery.ttl <= 300, `ttl ${delivery.ttl}`);
    }
    // Creating the agents told every device too, once each.
    for (const d of devices) assert.equal(received(d, 'agent_added').length, AGENTS, `${d.name}: one agent_added per agent`);

    // The owner approves some through B (passkey assertions, one at a time: the sign counter must
    // rise) while denying others through A; the dismissals are watched for meanwhile.
    const answered = [...APPROVED, ...DENIED].map((i) => txns[i]!);
    const open = OPEN.map((i) => txns[i]!);
    // Promptly: the scheduled dismissal at the expiry (300 s) is brought forward to the answer.
    const watching = firstSeen('dismiss', answered, devices, 10_000);
    watching.catch(() => {}); // awaited below, after the answers
    const answeredAt = new Map<string, number>();
    await Promise.all([
      (async () => {
        for (const i of APPROVED) {
          expectStatus(await remoteDecide(B(), owner, txns[i]!, true), 200, `approve request ${i} on B`);
          answeredAt.set(txns[i]!, Date.now());
        }
      })(),
      ...DENIED.map(async (i) => {
        expectStatus(await remoteDecide(A(), owner, txns[i]!, false), 200, `deny request ${i} on A`);
        answeredAt.set(txns[i]!, Date.now());
      }),
    ]);
    const dismissSeen = await watching;
    const dismissLatency = [...dismissSeen.entries()].map(([key, at]) => at - (answeredAt.get(key.split(' ')[1]!) ?? 0));
    await sleep(QUIET_MS);

    for (const d of devices) {
      const dismisses = received(d, 'dismiss');
      assert.deepEqual(dismisses.map((p) => p.txn_id).sort(), [...answered].sort(), `${d.name}: one dismiss per answered request, none for the open ones`);
      for (const p of dismisses) {
        assert.equal(p.url, `/app#requests/${p.txn_id}`);
        assert.equal(p.id, idOf.get(p.txn_id ?? ''), `${d.name}: the dismiss names the approval's notification`);
      }
    }
    assertNoDuplicates();

    // The inbox (read through either node): every approval, the answered ones read.
    const inbox = expectStatus(await call<{ items: NotificationOut[] }>(B(), 'GET', '/api/notifications?limit=100', undefined, owner.auth), 200, 'inbox').body.items;
    const approvals = inbox.filter((n) => n.type === 'approval');
    assert.deepEqual(approvals.map((n) => n.txn_id).sort(), [...txns].sort(), 'one approval notification per request');
    for (const n of approvals) {
      const i = txns.indexOf(n.txn_id ?? '');
      assert.equal(n.id, idOf.get(n.txn_id ?? ''), 'the pushed id is the inbox id');
      assert.equal(n.title, `Agent ${i} asks for access to ${site(i)}`);
      if (open.includes(n.txn_id ?? '')) assert.equal(n.read_at, null, `request ${i} is open: unread`);
      else assert.notEqual(n.read_at, null, `request ${i} was answered: read`);
    }
    assert.deepEqual(ps().rejections, [], 'every push was VAPID-signed with the deployment key and decrypts');

    const devicesAfter = await listDevices(A());
    for (const d of devices) assert.notEqual(devicesAfter.find((x) => x.id === d.id)?.last_used_at ?? null, null, `${d.name}: last_used_at set by a push`);
    t.diagnostic(`${AGENTS} requests (${createdAt - askedAt} ms to create) on ${devices.length} devices: all delivered ${fanOutMs} ms after the last was created; dismiss seen after the answer's reply: max ${Math.max(...dismissLatency)} ms, min ${Math.min(...dismissLatency)} ms, median ${dismissLatency.sort((x, y) => x - y)[Math.floor(dismissLatency.length / 2)]} ms`);
  });

  it('a node killed mid-send: the other node sends the message once the claim runs out, and nothing twice', async (t) => {
    const tablet = device('tablet');
    const others = devices.filter((d) => d !== tablet);
    const title = `Nightly run ${Date.now()}`;
    // What the devices show: a note's title always names its agent.
    const shown = `Agent 0: ${title}`;
    ps().behave(tablet.sub, { hang: true });
    const requestsBefore = ps().requests;
    const agent = agents[0]!;
    expectStatus(await call(A(), 'POST', '/api/v1/agent-notify', { agent_id: agent.id, agent_jwt: await agent.jwt(), title, text: 'all 312 invoices filed', kind: 'done' }), 200, 'agent note through A');
    // The three pushes reach the push service; the tablet's is held open, unanswered. The web push
    // transport gives up after 5 s: the node must die before that.
    await until('the push service to see the three note pushes', () => (ps().requests >= requestsBefore + devices.length ? true : undefined), { ms: 4_000, everyMs: 5, describe: diag });
    const noteRows = () => outboxRows(`kind = 'note' AND payload::text LIKE $1`, [`%${title}%`]);
    // The other devices' pushes are recorded as sent (else a resend would be a legitimate at-least-once
    // duplicate), and the tablet's is claimed by the node whose send hangs.
    const held = await until('the other pushes recorded as sent and the tablet\'s claimed', async () => {
      const rows = await noteRows();
      const mine = rows.find((r) => r.device_id === tablet.id);
      const rest = rows.filter((r) => r.device_id !== tablet.id);
      return rows.length === devices.length && rest.every((r) => r.sent_at !== null) && mine && mine.sent_at === null && mine.locked_by !== null ? mine : undefined;
    }, { ms: 3_000, everyMs: 5, describe: diag });
    // The note went through A, whose worker is woken at once; B polls every 100 ms and may have
    // claimed the tablet's push first. The node that holds the claim is the one to kill.
    const victim = [A(), B()].find((n) => held.locked_by?.includes(`/${n.pid}/`)) ?? assert.fail(`claimed by neither node: ${held.locked_by}`);
    survivor = victim === nodeA ? nodeB : nodeA;
    await victim.kill('SIGKILL');
    const killedAt = Date.now();
    const claimEnds = Number(held.locked_until);
    assert.ok(killedAt < claimEnds, `killed ${killedAt - claimEnds} ms after the claim ran out: not mid-send`);
    const afterKill = (await noteRows()).find((r) => r.device_id === tablet.id);
    assert.equal(afterKill?.sent_at, null, 'the dead node had not sent it');
    assert.equal(afterKill?.locked_by, held.locked_by, 'the dead node still holds the claim');
    assert.equal(received(tablet, 'note').length, 0);

    ps().behave(tablet.sub, undefined);
    await until('the surviving node to send the tablet its note', () => (received(tablet, 'note').some((p) => p.title === shown) ? true : undefined), { ms: 20_000, everyMs: 20, describe: diag });
    const deliveredAt = Date.now();
    assert.ok(deliveredAt >= claimEnds, `sent ${claimEnds - deliveredAt} ms before the dead node's claim ran out`);
    await sleep(QUIET_MS);

    for (const d of devices) {
      const notes = received(d, 'note').filter((p) => p.title === shown);
      assert.equal(notes.length, 1, `${d.name}: the note once`);
      assert.equal(notes[0]!.body, 'all 312 invoices filed');
    }
    const rows = await noteRows();
    const tabletRow = rows.find((r) => r.device_id === tablet.id);
    assert.notEqual(tabletRow?.sent_at, null);
    assert.equal(tabletRow?.attempts, 2, 'claimed twice: by the dead node, then by the survivor');
    for (const d of others) assert.equal(rows.find((r) => r.device_id === d.id)?.attempts, 1, `${d.name}: sent once, never claimed again`);
    assertNoDuplicates();
    assert.deepEqual(ps().rejections, []);
    t.diagnostic(`killed ${victim.name} ${killedAt - (claimEnds - CLAIM_MS)} ms into its claim; ${survivor?.name} sent the note ${deliveredAt - killedAt} ms after the kill (${deliveredAt - claimEnds} ms after the claim ran out)`);
  });

  it('a device its push service answers 410 is removed and sent nothing more', async (t) => {
    const node = survivor ?? assert.fail('no node survived the previous test');
    const laptop = device('laptop');
    const rest = devices.filter((d) => d !== laptop);
    ps().behave(laptop.sub, { status: 410, body: 'push subscription has unsubscribed or expired' });
    const start = Date.now();
    const txn1 = await ask(node, agents[0]!, 'gone-1.example');
    await until('the laptop to leave the device list', async () => ((await listDevices(node)).some((d) => d.id === laptop.id) ? undefined : true), { ms: 10_000, describe: diag });
    const removedMs = Date.now() - start;
    await firstSeen('approval', [txn1], rest, 10_000);
    const left = await listDevices(node);
    assert.deepEqual(left.filter((d) => d.kind === 'webpush').map((d) => d.id).sort(), rest.map((d) => d.id).sort());
    assert.equal(left.filter((d) => d.kind === 'passkey').length, 1, 'the passkey stays');
    // Its queued messages went with it: the dismissals scheduled for the open requests too.
    assert.deepEqual(await outboxRows('device_id = $1 AND sent_at IS NULL AND failed_at IS NULL', [laptop.id]), [], 'nothing queued for the removed device');

    // Were it sent anything now, the stand-in would accept and keep it.
    ps().behave(laptop.sub, undefined);
    const laptopBefore = received(laptop).length;
    const requestsBefore = ps().requests;
    const txn2 = await ask(node, agents[1]!, 'gone-2.example');
    await firstSeen('approval', [txn2], rest, 10_000);
    expectStatus(await remoteDecide(node, owner, txn1, false), 200, 'deny gone-1');
    expectStatus(await remoteDecide(node, owner, txn2, false), 200, 'deny gone-2');
    await firstSeen('dismiss', [txn1, txn2], rest, 10_000);
    await sleep(QUIET_MS);
    assert.equal(received(laptop).length, laptopBefore, `the removed laptop got nothing: ${JSON.stringify(received(laptop).slice(laptopBefore))}`);
    assert.equal(ps().requests - requestsBefore, rest.length * 3, 'one approval and two dismisses to each remaining device, nothing else');
    for (const d of rest) {
      assert.equal(received(d, 'approval').filter((p) => p.txn_id === txn1 || p.txn_id === txn2).length, 2, `${d.name}: both approvals once`);
      assert.equal(received(d, 'dismiss').filter((p) => p.txn_id === txn1 || p.txn_id === txn2).length, 2, `${d.name}: both dismisses once`);
    }
    assertNoDuplicates();
    assert.deepEqual(ps().rejections, []);
    t.diagnostic(`the 410 device left the list ${removedMs} ms after the request`);
  });
});
