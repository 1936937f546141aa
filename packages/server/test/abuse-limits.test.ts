import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateAgentKeyPair } from '@mandate/protocol';
import { expectStatus, json, signUp, type TestApp, testApp } from './helpers/app.ts';

/** Abuse limits on account and agent creation, on the fixed clock. */
describe('abuse limits', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  const HOUR = 3600_000;
  let seq = 0;
  const signUpFrom = (remoteAddress: string) =>
    t.app.inject({ method: 'POST', url: '/api/users', remoteAddress, payload: { email: `limit${++seq}@example.com`, password: 'correct horse battery' } });
  const newAgent = async (auth: Record<string, string>) =>
    t.app.inject({ method: 'POST', url: '/api/agents', headers: auth, payload: { name: 'Bot', jwk: (await generateAgentKeyPair()).publicJwk } });

  it('sign-up: 10 per client address per hour, then 429 with Retry-After; other addresses are not affected', async () => {
    const start = t.clock.now();
    for (let i = 0; i < 10; i++) expectStatus(await signUpFrom('192.0.2.1'), 200);
    t.clock.advance(HOUR / 2);
    const refused = await signUpFrom('192.0.2.1');
    expectStatus(refused, 429);
    const body = json<{ detail: string; retry_after: number }>(refused);
    assert.equal(body.detail, 'rate limit exceeded');
    assert.equal(refused.headers['retry-after'], String(body.retry_after));
    assert.ok(body.retry_after > 0 && body.retry_after <= 3600);
    expectStatus(await signUpFrom('192.0.2.2'), 200);
    t.clock.set(start + HOUR);
    expectStatus(await signUpFrom('192.0.2.1'), 200);
  });

  it('agent creation: 30 per owner per hour, then 429; another owner is not affected', async () => {
    const owner = await signUp(t.app);
    for (let i = 0; i < 30; i++) expectStatus(await newAgent(owner.auth), 200);
    const refused = await newAgent(owner.auth);
    expectStatus(refused, 429);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    expectStatus(await newAgent((await signUp(t.app)).auth), 200);
    t.clock.advance(HOUR);
    expectStatus(await newAgent(owner.auth), 200);
  });

  it('agent creation: at most 100 live agents per owner (409); removing one makes room', async () => {
    const owner = await signUp(t.app);
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      if (i % 30 === 0) t.clock.advance(HOUR);
      const res = await newAgent(owner.auth);
      expectStatus(res, 200);
      ids.push(json<{ id: string }>(res).id);
    }
    t.clock.advance(HOUR);
    const refused = await newAgent(owner.auth);
    expectStatus(refused, 409);
    assert.match(json<{ detail: string }>(refused).detail, /at most 100 agents; remove one/);
    expectStatus(await t.app.inject({ method: 'DELETE', url: `/api/agents/${ids[0]}`, headers: owner.auth }), 200);
    expectStatus(await newAgent(owner.auth), 200);
    expectStatus(await newAgent(owner.auth), 409);
  });
});
