import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createAgentJwt, generateAgentKeyPair } from '@mandate/protocol';
import { openPostgresStore } from '../../src/store/postgres/open.ts';
import type { Store } from '../../src/store/ports/index.ts';
import { freshPostgresDatabase } from '../helpers/postgres.ts';
import { freePort, startServer, type ServerProcess } from '../helpers/server-process.ts';
import { RelayClient } from '../helpers/relay-client.ts';

// Take-overs across two real server processes over one PostgreSQL database (decisions §21), with no
// sticky routing: each end may reach either node. The first node an end reaches relays the session;
// the other forwards its end there over NODE_INTERNAL_URL. Frames never touch the database.

/** A frame of about 1 MB: far over PostgreSQL's 8,000-byte NOTIFY, under the relay's 4 MB. */
/** The relay processes a server process started (relay/relay-child.js), from /proc. */
const relayProcessesOf = (pid: number): number[] =>
  readdirSync(`/proc/${pid}/task`).flatMap((tid) => readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number))
    .filter((child) => readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('relay-child'));

const BIG_FRAME = { t: 'frame', data: `/9j/${randomBytes(768 * 1024).toString('base64')}`, w: 1280, h: 800 };

interface Node extends ServerProcess {
  internalUrl: string;
}

async function startNode(name: string, env: Record<string, string>): Promise<Node> {
  const port = await freePort();
  const internalUrl = `http://127.0.0.1:${port}`;
  const server = await startServer({ name, port, env: { ...env, NODE_INTERNAL_URL: internalUrl } });
  return Object.assign(server, { internalUrl });
}

// Each node pairs its ends in its relay process (TAKEOVER_RELAY=process, the default: a forwarded end
// is handed to that process like any other) or in its own process (inline).
for (const mode of ['process', 'inline'] as const) describe(`take-overs across two nodes over one PostgreSQL database (${mode})`, () => {
  const nodes: Node[] = [];
  let db: { url: string; drop: () => Promise<void> } | undefined;
  let store: Store | undefined;
  let owner = { authorization: '' };
  let agents: { id: string; privateKey: CryptoKey }[] = [];
  let next = 0;

  const node = (i: 0 | 1): Node => {
    const n = nodes[i];
    if (!n) throw new Error('nodes not started');
    return n;
  };
  const logs = (): string => nodes.map((n) => `--- ${n.name}\n${n.logs()}`).join('\n');

  before(async () => {
    db = await freshPostgresDatabase();
    const a = await startNode('node A', { DATABASE_URL: db.url, TAKEOVER_RELAY: mode });
    nodes.push(a);
    nodes.push(await startNode('node B', { DATABASE_URL: db.url, BASE_URL: a.baseUrl, TAKEOVER_RELAY: mode }));
    const email = `relay-${randomBytes(4).toString('hex')}@example.com`;
    const signUp = await fetch(`${a.url}/api/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'correct horse battery' }) });
    assert.equal(signUp.status, 200);
    owner = { authorization: `Bearer ${String(((await signUp.json()) as { session_token: string }).session_token)}` };
    // One open take-over per agent: each scenario takes an agent of its own.
    agents = await Promise.all(Array.from({ length: 12 }, async (_, i) => {
      const { privateKey, publicJwk } = await generateAgentKeyPair();
      const res = await fetch(`${node((i % 2) as 0 | 1).url}/api/agents`, { method: 'POST', headers: { 'content-type': 'application/json', ...owner }, body: JSON.stringify({ name: `Browser ${i}`, jwk: publicJwk }) });
      assert.equal(res.status, 200);
      return { id: String(((await res.json()) as { id: string }).id), privateKey };
    }));
    store = await openPostgresStore(db.url, 2);
  });

  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await store?.close();
    await db?.drop();
  });

  /** Opens a take-over through node `via`; answers its id and the agent's relay token. */
  const open = async (via: Node): Promise<{ sid: string; token: string }> => {
    const agent = agents[next++];
    if (!agent) throw new Error('out of agents');
    const res = await fetch(`${via.url}/api/v1/takeover`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agent_id: agent.id, agent_jwt: await createAgentJwt(agent.privateKey, agent.id), url: 'https://shop.example/checkout', reason: 'a captcha' }) });
    const body = (await res.json()) as { takeover_id: string; agent_token: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    return { sid: body.takeover_id, token: body.agent_token };
  };
  const agentEnd = (at: Node, s: { sid: string; token: string }) => new RelayClient(`${at.url.replace(/^http/, 'ws')}/api/v1/takeover/${s.sid}/agent`, { authorization: `Bearer ${s.token}` });
  const ownerEnd = (at: Node, s: { sid: string }) => new RelayClient(`${at.url.replace(/^http/, 'ws')}/api/takeover/${s.sid}/owner`, owner);
  const relayNodeOf = async (sid: string) => (await store!.takeovers.byId(sid))?.relayNode;

  /** Both ends talk: live, a 1 MB frame and a url to the owner; a click and text to the agent. */
  async function talk(agent: RelayClient, ownerSide: RelayClient): Promise<void> {
    await agent.until(() => agent.messages.some((m) => m.t === 'live'), `live at the agent\n${logs()}`);
    agent.send(BIG_FRAME);
    agent.send({ t: 'url', url: 'https://shop.example/pay' });
    await ownerSide.until(() => ownerSide.messages.length >= 2, 'the frame and the url at the owner');
    assert.deepEqual(ownerSide.messages[0], BIG_FRAME);
    assert.deepEqual(ownerSide.messages[1], { t: 'url', url: 'https://shop.example/pay' });
    ownerSide.send({ t: 'click', x: 640, y: 400 });
    ownerSide.send({ t: 'text', text: 'hello' });
    await agent.until(() => agent.messages.filter((m) => m.t !== 'live').length >= 2, 'the click and the text at the agent');
    assert.deepEqual(agent.messages.filter((m) => m.t !== 'live'), [{ t: 'click', x: 640, y: 400 }, { t: 'text', text: 'hello' }]);
  }

  it('the agent on A, the owner on B: A relays, B forwards; a 1 MB frame, clicks and text pass; done closes both', async () => {
    const s = await open(node(0));
    const agent = agentEnd(node(0), s);
    await agent.opened;
    const ownerSide = ownerEnd(node(1), s);
    await ownerSide.opened;
    await talk(agent, ownerSide);
    assert.equal(await relayNodeOf(s.sid), node(0).internalUrl);
    // In process mode A pairs the ends, the one forwarded by B among them, in its relay process.
    assert.equal(relayProcessesOf(node(0).pid).length, mode === 'process' ? 1 : 0);
    agent.send({ t: 'done' });
    await ownerSide.until(() => ownerSide.closed !== undefined, 'the owner closed');
    await agent.until(() => agent.closed !== undefined, 'the agent closed');
    assert.deepEqual(ownerSide.messages.at(-1), { t: 'done' });
    assert.deepEqual(agent.messages.at(-1), { t: 'done' });
    assert.equal(ownerSide.closed?.code, 1000);
    assert.equal((await store!.takeovers.byId(s.sid))?.state, 'done');
  });

  it('the owner first on B, the agent then on A: B relays; a cancel on A reaches both ends at once', async () => {
    let relayed: string | null | undefined;
    const s = await open(node(0));
    const ownerSide = ownerEnd(node(1), s);
    await ownerSide.opened;
    // The socket is open before B has recorded itself as the relay (a few milliseconds later).
    await ownerSide.until(() => relayed === node(1).internalUrl, 'B recorded as the relay', async () => { relayed = await relayNodeOf(s.sid); });
    const agent = agentEnd(node(0), s);
    await agent.opened;
    await talk(agent, ownerSide);
    const started = Date.now();
    const cancel = await fetch(`${node(0).url}/api/takeover/${s.sid}/cancel`, { method: 'POST', headers: owner });
    assert.equal(cancel.status, 200);
    await agent.until(() => agent.closed !== undefined, 'the agent closed');
    await ownerSide.until(() => ownerSide.closed !== undefined, 'the owner closed');
    assert.deepEqual(agent.messages.at(-1), { t: 'cancelled' });
    assert.deepEqual(ownerSide.messages.at(-1), { t: 'cancelled' });
    // Told by node A, not found by node B's 10 s check.
    assert.ok(Date.now() - started < 5000, `closed after ${Date.now() - started} ms`);
  });

  it('both ends at once on different nodes, five times: every pair meets on one relaying node', async () => {
    for (let i = 0; i < 5; i++) {
      const s = await open(node((i % 2) as 0 | 1));
      const agent = agentEnd(node(0), s);
      const ownerSide = ownerEnd(node(1), s);
      await Promise.all([agent.opened, ownerSide.opened]);
      await talk(agent, ownerSide);
      assert.ok([node(0).internalUrl, node(1).internalUrl].includes((await relayNodeOf(s.sid)) ?? ''));
      agent.ws.close();
      await ownerSide.until(() => ownerSide.closed !== undefined, 'the owner closed');
      assert.deepEqual(ownerSide.messages.at(-1), { t: 'agent_left' });
    }
  });

  it('a forwarded end that sends garbage is closed with the reason by the relaying node, through the forwarder', async () => {
    const s = await open(node(1));
    const agent = agentEnd(node(0), s);
    await agent.opened;
    const ownerSide = ownerEnd(node(1), s);
    await ownerSide.opened;
    await agent.until(() => agent.messages.some((m) => m.t === 'live'), 'live');
    ownerSide.send({ t: 'click', x: 'left' });
    await ownerSide.until(() => ownerSide.closed !== undefined, 'the owner closed');
    assert.equal(ownerSide.closed?.code, 1008);
    assert.ok(ownerSide.closed?.reason, 'a reason');
    // The owner may come back; the session is still open (the agent is told live again once it is paired).
    const again = ownerEnd(node(1), s);
    await again.opened;
    await agent.until(() => agent.messages.filter((m) => m.t === 'live').length === 2, 'live again');
    agent.send({ t: 'done' });
    await again.until(() => again.closed !== undefined, 'closed by done');
    assert.deepEqual(again.messages.at(-1), { t: 'done' });
  });

  it('the relaying node dies: the ends come back through the other node, which takes the relay over', async () => {
    const s = await open(node(0));
    const agent = agentEnd(node(1), s);
    await agent.opened;
    const ownerSide = ownerEnd(node(1), s);
    await ownerSide.opened;
    await agent.until(() => agent.messages.some((m) => m.t === 'live'), 'live');
    assert.equal(await relayNodeOf(s.sid), node(1).internalUrl);
    await node(1).kill('SIGKILL');
    await agent.until(() => agent.closed !== undefined, 'the agent cut off');
    const agentAgain = agentEnd(node(0), s);
    await agentAgain.opened;
    const ownerAgain = ownerEnd(node(0), s);
    await ownerAgain.opened;
    await talk(agentAgain, ownerAgain);
    assert.equal(await relayNodeOf(s.sid), node(0).internalUrl);
  });
});
