import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { PassThrough } from 'node:stream';
import { testApp, json, expectStatus, type TestApp } from './helpers/app.ts';
import { createAgent } from './helpers/agents.ts';
import { RelayClient } from './helpers/relay-client.ts';
import { until } from './helpers/until.ts';

// The relay process (TAKEOVER_RELAY=process, the default; relay/child-ends.ts): a real child process
// that gets the ends' sockets, over a listening server and real WebSocket clients.

interface Opened { takeover_id: string; agent_token: string }
/** A frame of about 68 kB of base64, as the agent SDK spells it. */
const FRAME = { t: 'frame', data: `/9j/${randomBytes(51_000).toString('base64')}`, w: 1280, h: 800 };

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('take-over relay process', () => {
  let t: TestApp;
  let ws: string;
  const logs = new PassThrough();
  const logged: string[] = [];
  before(async () => {
    logs.on('data', (d: Buffer) => logged.push(d.toString()));
    t = await testApp({ env: { LOG_LEVEL: 'info' }, logStream: logs });
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    ws = address.replace(/^http/, 'ws');
  });
  after(() => t.close());

  const open = async () => {
    const a = await createAgent(t);
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
  const relayFrames = async (n: number) => {
    const s = await open();
    const ends = await connect(s);
    // One at a time: a frame sent while 1 MiB is still unsent to the owner would be dropped.
    for (let i = 1; i <= n; i++) {
      ends.agentEnd.send(FRAME);
      await ends.ownerEnd.until(() => ends.ownerEnd.messages.length === i, `frame ${i}`);
    }
    assert.deepEqual(ends.ownerEnd.messages[0], FRAME);
    return { s, ...ends };
  };

  it('relays from a process whose heap stays a few MB (asked over IPC), not the service\'s', async (ctx) => {
    const { agentEnd, ownerEnd } = await relayFrames(50);
    const pid = t.services.relay.relayPid;
    assert.ok(pid !== undefined && pid !== process.pid && isRunning(pid));
    const child = await t.services.relay.relayMemory();
    const own = process.memoryUsage();
    ctx.diagnostic(`heap used: relay process ${(child.heapUsed / 1e6).toFixed(1)} MB, the service's process ${(own.heapUsed / 1e6).toFixed(1)} MB`);
    assert.ok(child.heapUsed < 15 * 1024 * 1024, `the relay process's heap: ${(child.heapUsed / 1e6).toFixed(1)} MB`);
    assert.ok(own.heapUsed > child.heapUsed * 2, `the service's heap ${(own.heapUsed / 1e6).toFixed(1)} MB against the relay process's ${(child.heapUsed / 1e6).toFixed(1)} MB`);
    agentEnd.ws.close();
    await ownerEnd.until(() => ownerEnd.closed !== undefined, 'owner closed');
  });

  it('the relay process dying mid-session: both ends closed with 1011 and a reason, the take-over ended, the log says why; the next session works in a new relay process', async () => {
    const { s, agentEnd, ownerEnd } = await relayFrames(3);
    const pid = t.services.relay.relayPid!;
    process.kill(pid, 'SIGKILL');
    await agentEnd.until(() => agentEnd.closed !== undefined, 'agent closed');
    await ownerEnd.until(() => ownerEnd.closed !== undefined, 'owner closed');
    for (const end of [agentEnd, ownerEnd]) {
      assert.equal(end.closed?.code, 1011);
      assert.match(end.closed!.reason, /relay process stopped/);
    }
    await until('the take-over ended', async () => ((await t.services.store.takeovers.byId(s.takeover_id))?.state === 'agent_left' ? true : undefined));
    assert.equal(t.services.relay.size, 0);
    assert.ok(logged.some((l) => /relay process exited/.test(l) && /SIGKILL/.test(l)), logged.join(''));
    await until('restarted', () => t.services.relay.relayPid);
    assert.notEqual(t.services.relay.relayPid, pid);
    const next = await relayFrames(3);
    next.agentEnd.send({ t: 'done' });
    await next.ownerEnd.until(() => next.ownerEnd.closed !== undefined, 'closed by done');
    assert.deepEqual(next.ownerEnd.messages.at(-1), { t: 'done' });
  });

  it('an upgrade the relay process could not answer (a malformed Sec-WebSocket-Key) is answered 400 by the service and pairs nothing', async () => {
    const s = await open();
    const before = t.services.relay.size;
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${ws.replace(/^ws/, 'http')}/api/v1/takeover/${s.takeover_id}/agent`, { headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'not a key', authorization: `Bearer ${s.agent_token}` } });
      req.on('response', (res) => resolve(res.statusCode ?? 0));
      req.on('upgrade', () => reject(new Error('upgraded')));
      req.on('error', reject);
      req.end();
    });
    assert.equal(status, 400);
    assert.equal(t.services.relay.size, before);
  });

  it('shutdown closes the ends (1001) and stops the relay process', async () => {
    const own = await testApp();
    const address = await own.app.listen({ port: 0, host: '127.0.0.1' });
    const a = await createAgent(own);
    const res = await own.app.inject({ method: 'POST', url: '/api/v1/takeover', payload: { agent_id: a.id, agent_jwt: await a.jwt(), url: 'https://shop.example/', reason: 'captcha' } });
    const s = json<Opened>(res);
    const agentEnd = new RelayClient(`${address.replace(/^http/, 'ws')}/api/v1/takeover/${s.takeover_id}/agent`, { authorization: `Bearer ${s.agent_token}` });
    await agentEnd.opened;
    const pid = own.services.relay.relayPid!;
    assert.ok(isRunning(pid));
    await own.close();
    assert.deepEqual(agentEnd.closed, { code: 1001, reason: 'server stopping' });
    await until('the relay process gone', () => (isRunning(pid) ? undefined : true));
  });
});
