import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'ws';
import { HttpOwner } from '../../server/test/helpers/over-http.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { MandateAgent } from '../src/agent.ts';
import { AgentKey } from '../src/keys/agent-key.ts';
import { type TakeoverCommand, streamTakeover } from '../src/takeover.ts';

// The SDK's take-over client against a real server process: it asks for a take-over, streams frames
// from a callback once the owner is live, carries out the owner's click, and hands back with done.

describe('agent SDK: take-overs', { timeout: 120_000 }, () => {
  let server: ServerProcess;
  let owner: HttpOwner;
  before(async () => {
    server = await startServer({ env: { DATABASE_URL: '' } });
    owner = await HttpOwner.signUp(server, server.baseUrl);
  });
  after(() => server?.stop());

  it('streams frames to the owner, receives a click, and done ends the session for both', async () => {
    const key = await AgentKey.generate();
    const agentId = await owner.createAgent('Browser', key.publicJwk);
    const agent = new MandateAgent({ serviceUrl: server.url, agentId, privateKey: key });
    const session = await agent.requestTakeover({ url: 'https://shop.example/login', reason: 'a captcha' });
    assert.equal(session.expiresIn, 600);

    const commands: TakeoverCommand[] = [];
    let frames = 0;
    const jpeg = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
    const stream = await streamTakeover({
      serviceUrl: server.url, takeoverId: session.takeoverId, agentToken: session.agentToken, WebSocket, fps: 10,
      frame: async () => { frames++; return { jpeg, w: 1280, h: 720 }; },
      onCommand: (c) => { commands.push(c); },
    });

    const ownerEnd = new WebSocket(`${server.url.replace(/^http/, 'ws')}/api/takeover/${session.takeoverId}/owner`, { headers: owner.auth });
    const seen: Record<string, unknown>[] = [];
    ownerEnd.on('message', (d) => seen.push(JSON.parse(d.toString()) as Record<string, unknown>));
    await new Promise((resolve, reject) => { ownerEnd.once('open', resolve); ownerEnd.once('error', reject); });
    const until = async (check: () => boolean, what: string) => {
      for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(check(), what);
    };
    await until(() => seen.filter((m) => m.t === 'frame').length >= 2, 'frames reach the owner');
    assert.deepEqual(seen.find((m) => m.t === 'frame'), { t: 'frame', data: Buffer.from(jpeg).toString('base64'), w: 1280, h: 720 });
    stream.url('https://shop.example/account');
    ownerEnd.send(JSON.stringify({ t: 'click', x: 640, y: 360 }));
    await until(() => commands.some((c) => c.t === 'click'), 'the click reaches the agent');
    assert.deepEqual(commands.find((c) => c.t === 'click'), { t: 'click', x: 640, y: 360 });
    await until(() => seen.some((m) => m.t === 'url'), 'the url reaches the owner');

    stream.done();
    assert.equal(await stream.ended, 'done');
    await until(() => seen.at(-1)?.t === 'done', 'the owner is told');
    assert.ok(frames >= 2);
    const id = await agent.reportTakeover({ site: 'shop.example', kind: 'input_not_detected' });
    assert.match(id, /^tkr_/);
  });
});
