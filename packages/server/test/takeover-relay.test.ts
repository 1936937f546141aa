import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { testApp, signUp, json, expectStatus, type TestApp } from './helpers/app.ts';
import { createAgent, type TestAgent } from './helpers/agents.ts';
import { RelayClient } from './helpers/relay-client.ts';

interface Opened { takeover_id: string; agent_token: string }
/** A tiny valid-looking JPEG in base64 (starts FF D8 FF). */
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 74, 70, 73, 70, 0, 1]).toString('base64');

/**
 * The relay between two real WebSocket clients over a listening server (decisions §21), on SQLite and
 * PostgreSQL, with the ends paired in the relay process (TAKEOVER_RELAY=process, the default) and in
 * the service's own (inline).
 */
for (const [backend, mode] of [['sqlite', 'process'], ['sqlite', 'inline'], ['postgres', 'process'], ['postgres', 'inline']] as const) {
  describe(`take-over relay (${backend}, ${mode})`, () => {
    let t: TestApp;
    let ws: string;
    before(async () => {
      t = await testApp({ backend, env: { TAKEOVER_RELAY: mode } });
      const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
      ws = address.replace(/^http/, 'ws');
    });
    after(() => t.close());

    const open = async (agent?: TestAgent) => {
      const a = agent ?? (await createAgent(t));
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/takeover', payload: { agent_id: a.id, agent_jwt: await a.jwt(), url: 'https://shop.example/', reason: 'captcha' } });
      expectStatus(res, 200);
      return { agent: a, ...json<Opened>(res) };
    };
    const connect = async (s: Awaited<ReturnType<typeof open>>) => {
      const agentEnd = new RelayClient(`${ws}/api/v1/takeover/${s.takeover_id}/agent`, { authorization: `Bearer ${s.agent_token}` });
      await agentEnd.opened;
      const ownerEnd = new RelayClient(`${ws}/api/takeover/${s.takeover_id}/owner`, s.agent.owner.auth);
      await ownerEnd.opened;
      await agentEnd.until(() => agentEnd.messages.some((m) => m.t === 'live'), 'live');
      return { agentEnd, ownerEnd };
    };

    it('relays frames to the owner and clicks, text and keys to the agent; done closes both; nothing is stored', async () => {
      const s = await open();
      const { agentEnd, ownerEnd } = await connect(s);
      agentEnd.send({ t: 'frame', data: JPEG, w: 390, h: 844 });
      agentEnd.send({ t: 'url', url: 'https://shop.example/pay' });
      agentEnd.send({ t: 'focus', field: 'card number' });
      await ownerEnd.until(() => ownerEnd.messages.length === 3, 'three messages');
      assert.deepEqual(ownerEnd.messages[0], { t: 'frame', data: JPEG, w: 390, h: 844 });
      for (const m of [{ t: 'click', x: 10, y: 20 }, { t: 'set', value: 'x'.repeat(1000) }, { t: 'text', text: 'hello' }, { t: 'key', key: 'Enter' }, { t: 'scroll', dy: -300 }]) ownerEnd.send(m);
      await agentEnd.until(() => agentEnd.messages.length === 6, 'five commands after live');
      assert.deepEqual(agentEnd.messages.slice(1).map((m) => m.t), ['click', 'set', 'text', 'key', 'scroll']);
      agentEnd.send({ t: 'done' });
      await ownerEnd.until(() => ownerEnd.closed !== undefined, 'owner closed');
      await agentEnd.until(() => agentEnd.closed !== undefined, 'agent closed');
      assert.deepEqual(ownerEnd.messages.at(-1), { t: 'done' });
      assert.equal((await t.services.store.takeovers.byId(s.takeover_id))?.state, 'done');
      const row = JSON.stringify(await t.services.store.takeovers.byId(s.takeover_id));
      assert.ok(!row.includes(JPEG));
    });

    it('the owner first, the agent after (the owner tapped the push before the agent connected): the agent still gets live', async () => {
      const s = await open();
      const ownerEnd = new RelayClient(`${ws}/api/takeover/${s.takeover_id}/owner`, s.agent.owner.auth);
      await ownerEnd.opened;
      const agentEnd = new RelayClient(`${ws}/api/v1/takeover/${s.takeover_id}/agent`, { authorization: `Bearer ${s.agent_token}` });
      await agentEnd.opened;
      await agentEnd.until(() => agentEnd.messages.some((m) => m.t === 'live'), 'live');
      agentEnd.send({ t: 'frame', data: JPEG, w: 390, h: 844 });
      await ownerEnd.until(() => ownerEnd.messages.some((m) => m.t === 'frame'), 'a frame');
      agentEnd.send({ t: 'done' });
      await ownerEnd.until(() => ownerEnd.closed !== undefined, 'owner closed');
    });

    it('the agent token only in the header: a query string 400, a wrong token 401, no token 401; owner: not signed in 401, another owner 404, a foreign Origin with the cookie 403', async () => {
      const s = await open();
      const url = `${ws}/api/v1/takeover/${s.takeover_id}/agent`;
      assert.equal(await new RelayClient(`${url}?token=${s.agent_token}`, {}).refused, 400);
      assert.equal(await new RelayClient(`${url}?x=1`, { authorization: `Bearer ${s.agent_token}` }).refused, 400);
      assert.equal(await new RelayClient(url, { authorization: 'Bearer wrong' }).refused, 401);
      assert.equal(await new RelayClient(url, {}).refused, 401);
      const ownerUrl = `${ws}/api/takeover/${s.takeover_id}/owner`;
      assert.equal(await new RelayClient(ownerUrl, {}).refused, 401);
      const other = await signUp(t.app);
      assert.equal(await new RelayClient(ownerUrl, other.auth).refused, 404);
      const cookie = `session=${s.agent.owner.session_token}`;
      assert.equal(await new RelayClient(ownerUrl, { cookie, origin: 'https://evil.example' }).refused, 403);
      const same = new RelayClient(ownerUrl, { cookie, origin: 'http://localhost:8080' });
      await same.opened;
      same.ws.close();
    });

    it('garbage closes the sender with a reason (1008), over 4 MB closes it (1009); the server keeps serving', async () => {
      const cases: [string, unknown, RegExp][] = [
        ['owner', 'not json', /not JSON/],
        ['owner', { t: 'click', x: 1 }, /click takes exactly/],
        ['owner', { t: 'key', key: 'F5' }, /key takes exactly/],
        ['owner', { t: 'text', text: 'x'.repeat(501) }, /at most 500/],
        ['owner', { t: 'set', value: 'x'.repeat(1001) }, /at most 1000/],
        ['agent', { t: 'frame', data: 'not base64!', w: 1, h: 1 }, /base64/],
        ['agent', { t: 'frame', data: JPEG, w: 1, h: 1, extra: 1 }, /exactly/],
        ['agent', [1, 2], /not a JSON object/],
        ['agent', { t: 'hello' }, /unknown message type/],
      ];
      for (const [who, message, reason] of cases) {
        const s = await open();
        const { agentEnd, ownerEnd } = await connect(s);
        const sender = who === 'agent' ? agentEnd : ownerEnd;
        sender.send(message);
        await sender.until(() => sender.closed !== undefined, `${who} closed`);
        assert.equal(sender.closed?.code, 1008);
        assert.match(sender.closed!.reason, reason);
        agentEnd.ws.close();
        ownerEnd.ws.close();
      }
      const s = await open();
      const { agentEnd } = await connect(s);
      agentEnd.send({ t: 'frame', data: `/9j/${'A'.repeat(4 * 1024 * 1024)}`, w: 1, h: 1 });
      await agentEnd.until(() => agentEnd.closed !== undefined, 'closed for size');
      assert.equal(agentEnd.closed?.code, 1009);
      expectStatus(await t.app.inject({ url: '/api/takeover/active', headers: s.agent.owner.auth }), 200);
    });

    it('text that is not valid UTF-8 closes the sender (1007) and is not relayed; valid UTF-8 is relayed byte for byte', async () => {
      const s0 = await open();
      const ok = await connect(s0);
      ok.ownerEnd.send({ t: 'text', text: 'café ✓ 日本' });
      ok.agentEnd.send(`{"data":"${JPEG}","t":"frame","w":2,"h":3}`); // another key order: the full check
      await ok.agentEnd.until(() => ok.agentEnd.messages.length === 2, 'text');
      assert.deepEqual(ok.agentEnd.messages[1], { t: 'text', text: 'café ✓ 日本' });
      await ok.ownerEnd.until(() => ok.ownerEnd.messages.length === 1, 'frame');
      assert.deepEqual(ok.ownerEnd.messages[0], { t: 'frame', data: JPEG, w: 2, h: 3 });
      ok.agentEnd.ws.close();
      ok.ownerEnd.ws.close();
      const bad = (text: string, byte: number): Buffer => {
        const b = Buffer.from(text, 'latin1');
        b[b.indexOf(0x7e)] = byte; // the ~ marks where the stray byte goes
        return b;
      };
      const cases: ['agent' | 'owner', Buffer][] = [
        ['agent', bad(`{"t":"frame","data":"/9j/~AAA","w":1,"h":1}`, 0xff)],
        ['agent', bad('{"t":"url","url":"https://shop.example/~"}', 0xc3)],
        ['owner', bad('{"t":"text","text":"~"}', 0xc3)],
        ['owner', bad('{"t":"set","value":"~"}', 0x80)],
      ];
      for (const [who, bytes] of cases) {
        const s = await open();
        const { agentEnd, ownerEnd } = await connect(s);
        const [sender, other] = who === 'agent' ? [agentEnd, ownerEnd] : [ownerEnd, agentEnd];
        const before = other.messages.length;
        sender.ws.send(bytes, { binary: false });
        await sender.until(() => sender.closed !== undefined, `${who} closed`);
        assert.equal(sender.closed?.code, 1007);
        assert.match(sender.closed!.reason, /UTF-8/);
        // Nothing reached the other end but, once the agent is gone, the closing message.
        assert.deepEqual(other.messages.slice(before).filter((m) => m.t !== 'agent_left'), []);
        agentEnd.ws.close();
        ownerEnd.ws.close();
      }
    });

    it('cancel over HTTP sends cancelled to both; the agent leaving sends agent_left; after 600 s (fixed clock) expired', async () => {
      const a = await open();
      const one = await connect(a);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/takeover/${a.takeover_id}/cancel`, headers: a.agent.owner.auth }), 200);
      await one.agentEnd.until(() => one.agentEnd.closed !== undefined, 'agent closed');
      assert.deepEqual(one.agentEnd.messages.at(-1), { t: 'cancelled' });
      assert.deepEqual(one.ownerEnd.messages.at(-1), { t: 'cancelled' });

      const b = await open(a.agent);
      const two = await connect(b);
      two.agentEnd.ws.close();
      await two.ownerEnd.until(() => two.ownerEnd.closed !== undefined, 'owner closed');
      assert.deepEqual(two.ownerEnd.messages.at(-1), { t: 'agent_left' });
      assert.equal((await t.services.store.takeovers.byId(b.takeover_id))?.state, 'agent_left');

      const c = await open(a.agent);
      const three = await connect(c);
      t.clock.advance(600_000);
      three.ownerEnd.send({ t: 'click', x: 1, y: 1 });
      await three.agentEnd.until(() => three.agentEnd.closed !== undefined, 'agent closed');
      assert.deepEqual(three.agentEnd.messages.at(-1), { t: 'expired' });
      assert.equal((await t.services.store.takeovers.byId(c.takeover_id))?.state, 'expired');
      assert.equal(await new RelayClient(`${ws}/api/v1/takeover/${c.takeover_id}/agent`, { authorization: `Bearer ${c.agent_token}` }).refused, 401);
    });

    it('a session ended or erased where this node could not tell: relay-check and the periodic check close both ends', async () => {
      const a = await open();
      const one = await connect(a);
      // Ended in the store behind the relay's back, as a cancel on another node does.
      assert.equal(await t.services.store.takeovers.end(a.takeover_id, 'cancelled', t.clock.now()), true);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/takeover/${a.takeover_id}/relay-check` }), 204);
      await one.agentEnd.until(() => one.agentEnd.closed !== undefined, 'agent closed by relay-check');
      assert.deepEqual(one.ownerEnd.messages.at(-1), { t: 'cancelled' });
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/takeover/tk_unknown/relay-check' }), 204);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/takeover/${'x'.repeat(65)}/relay-check` }), 422);

      // Erased behind the relay's back (as on another node): the row is gone, and the periodic check
      // tells both ends it was cancelled.
      const b = await open(a.agent);
      const two = await connect(b);
      await t.services.store.takeovers.deleteForUser(a.agent.owner.user.id);
      await t.services.relay.checkHeld();
      await two.agentEnd.until(() => two.agentEnd.closed !== undefined, 'agent closed by the periodic check');
      assert.deepEqual(two.agentEnd.messages.at(-1), { t: 'cancelled' });
      assert.deepEqual(two.ownerEnd.messages.at(-1), { t: 'cancelled' });

      // The owner deletes the account on this node: its take-overs close at once.
      const c = await open();
      const three = await connect(c);
      const { email, password } = c.agent.owner;
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/account/delete', headers: c.agent.owner.auth, payload: { confirm: email, password } }), 200);
      await three.agentEnd.until(() => three.agentEnd.closed !== undefined, 'agent closed by the deletion');
      assert.deepEqual(three.ownerEnd.messages.at(-1), { t: 'cancelled' });
      assert.equal(t.services.relay.size, 0);
    });
  });
}
