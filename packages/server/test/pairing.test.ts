import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateAgentKeyPair } from '@mandate/protocol';
import type { LightMyRequestResponse } from 'fastify';
import { testApp, signUp, json, expectStatus, remoteAddress, type TestApp } from './helpers/app.ts';
import { PAIRING, PAIRING_ALPHABET, newPairingCode, normalizePairingCode } from '../src/domain/agents/pairing.ts';

// Pairing (POST /api/agents/pairing-codes, POST /api/v1/agents/pair): the owner makes a one-time
// code, the agent redeems it with its public key; no owner credential on the agent's machine.

type Owner = Awaited<ReturnType<typeof signUp>>;
type Code = { code: string; expires_at: string; expires_in: number; name: string | null };

const publicJwk = async () => (await generateAgentKeyPair()).publicJwk;

describe('pairing codes (pure rules)', () => {
  it('are 8 symbols without look-alikes, shown as XXXX-XXXX, read back in any case and spacing', () => {
    for (let i = 0; i < 200; i++) {
      const code = newPairingCode();
      assert.match(code, /^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
      assert.doesNotMatch(code, /[01ILO]/);
      assert.equal(normalizePairingCode(code), code.replace('-', ''));
      assert.equal(normalizePairingCode(` ${code.toLowerCase().replace('-', ' - ')} `), code.replace('-', ''));
    }
    assert.equal(PAIRING_ALPHABET.length, 31);
    for (const bad of ['', 'ABCD-EFG', 'ABCD-EFGHJ', 'ABCD-EFG0', 'ABCD-EFGI', 'ABCD_EFGH', 'ÄBCD-EFGH']) assert.equal(normalizePairingCode(bad), undefined, bad);
  });
});

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`pairing (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend });
    });
    after(() => t.close());

    const makeCode = async (owner: Owner, payload: Record<string, unknown> = {}): Promise<Code> => {
      const res = await t.app.inject({ method: 'POST', url: '/api/agents/pairing-codes', headers: owner.auth, payload });
      expectStatus(res, 200);
      return json<Code>(res);
    };
    const pair = (payload: Record<string, unknown>, ip = remoteAddress()): Promise<LightMyRequestResponse> =>
      t.app.inject({ method: 'POST', url: '/api/v1/agents/pair', remoteAddress: ip, payload });

    it('makes a code only for a signed-in owner; it lasts 10 minutes', async () => {
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/agents/pairing-codes', payload: {} }), 401);
      const owner = await signUp(t.app);
      const code = await makeCode(owner, { name: 'Shopper' });
      assert.match(code.code, /^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
      assert.equal(Date.parse(code.expires_at), t.clock.now() + PAIRING.lifetimeMs);
      assert.equal(code.expires_in, 600);
      assert.equal(code.name, 'Shopper');
      // No body at all is fine too (no name).
      const bare = await t.app.inject({ method: 'POST', url: '/api/agents/pairing-codes', headers: owner.auth });
      expectStatus(bare, 200);
      assert.equal(json<Code>(bare).name, null);
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/agents/pairing-codes', headers: owner.auth, payload: { name: '   ' } }), 400);
      // Only the hash is stored: the code itself is nowhere in the challenge table.
      const consumedRaw = await t.services.store.challenges.consume(code.code.replace('-', ''), 'pairing', t.clock.now());
      assert.equal(consumedRaw, undefined);
    });

    it('a redeemed code creates the agent under the owner, with the owner\'s name for it, and tells the owner', async () => {
      const owner = await signUp(t.app);
      const { code } = await makeCode(owner, { name: 'Shopper' });
      const jwk = await publicJwk();
      const res = await pair({ code: code.toLowerCase().replace('-', ' '), name: 'agent says', jwk });
      expectStatus(res, 200);
      const body = json<{ agent_id: string; name: string; jkt: string }>(res);
      assert.match(body.agent_id, /^ag_[a-z2-7]{26}$/);
      assert.equal(body.name, 'Shopper');
      const agents = json<{ id: string; name: string; jkt: string }[]>(await t.app.inject({ url: '/api/agents', headers: owner.auth }));
      assert.deepEqual(agents.map((a) => [a.id, a.name, a.jkt]), [[body.agent_id, 'Shopper', body.jkt]]);
      const inbox = json<{ items: { type: string | null; title: string }[] }>(await t.app.inject({ url: '/api/notifications', headers: owner.auth }));
      assert.ok(inbox.items.some((n) => n.type === 'agent_added' && n.title === 'New agent: Shopper'), JSON.stringify(inbox.items));
      const activity = json<{ items: { action: string }[] }>(await t.app.inject({ url: '/api/activity', headers: owner.auth }));
      assert.ok(activity.items.some((a) => a.action === 'agent.created'));

      // Used once: a second try, even with another key, is refused.
      const again = await pair({ code, jwk: await publicJwk() });
      expectStatus(again, 400);
      assert.match(json<{ detail: string; next_step: string }>(again).detail, /unknown, used or expired/);
      assert.match(json<{ next_step: string }>(again).next_step, /new code/);
    });

    it('takes the agent\'s name when the owner gave none, else "New agent"', async () => {
      const owner = await signUp(t.app);
      const named = await pair({ code: (await makeCode(owner)).code, name: '  Night crawler ', jwk: await publicJwk() });
      expectStatus(named, 200);
      assert.equal(json<{ name: string }>(named).name, 'Night crawler');
      const unnamed = await pair({ code: (await makeCode(owner)).code, jwk: await publicJwk() });
      expectStatus(unnamed, 200);
      assert.equal(json<{ name: string }>(unnamed).name, 'New agent');
    });

    it('of racing redeemers exactly one wins', async () => {
      const owner = await signUp(t.app);
      const { code } = await makeCode(owner, { name: 'Racer' });
      const keys = await Promise.all(Array.from({ length: 20 }, publicJwk));
      const answers = await Promise.all(keys.map((jwk) => pair({ code, jwk })));
      for (const r of answers) assert.ok(r.statusCode === 200 || r.statusCode === 400, `${r.statusCode} ${r.body}`);
      assert.equal(answers.filter((r) => r.statusCode === 200).length, 1);
      const agents = json<{ name: string }[]>(await t.app.inject({ url: '/api/agents', headers: owner.auth }));
      assert.equal(agents.length, 1);
    });

    it('refuses an expired code and a wrong code', async () => {
      const owner = await signUp(t.app);
      const { code } = await makeCode(owner);
      t.clock.advance(PAIRING.lifetimeMs);
      const expired = await pair({ code, jwk: await publicJwk() });
      expectStatus(expired, 400);
      assert.match(json<{ detail: string }>(expired).detail, /unknown, used or expired/);

      const fresh = await makeCode(owner);
      const wrongSymbol = fresh.code.startsWith('A') ? 'B' : 'A';
      for (const wrong of [`${wrongSymbol}${fresh.code.slice(1)}`, 'ABCD-EFG', 'not a code at all', '0000-0000']) {
        const res = await pair({ code: wrong, jwk: await publicJwk() });
        expectStatus(res, 400);
        assert.match(json<{ detail: string }>(res).detail, /unknown, used or expired/, wrong);
      }
      // None of that used the real code up.
      expectStatus(await pair({ code: fresh.code, jwk: await publicJwk() }), 200);
      assert.equal(json<unknown[]>(await t.app.inject({ url: '/api/agents', headers: owner.auth })).length, 1);
    });

    it('a bad key is refused without using the code up', async () => {
      const owner = await signUp(t.app);
      const { code } = await makeCode(owner);
      const jwk = await publicJwk();
      for (const payload of [{ code }, { code, jwk: { ...jwk, d: 'private' } }, { code, jwk, pubkey: 'both' }, { code, pubkey: 'not a pem' }, { code, jwk, name: '' }]) {
        const res = await pair(payload);
        assert.ok(res.statusCode === 400 || res.statusCode === 422, `${JSON.stringify(payload).slice(0, 60)} -> ${res.statusCode} ${res.body}`);
      }
      expectStatus(await pair({ code, jwk }), 200);
    });

    it('limits redeeming per client address (429 with Retry-After), and codes per owner', async () => {
      const owner = await signUp(t.app);
      const ip = remoteAddress();
      for (let i = 0; i < PAIRING.redeemsPerAddress; i++) expectStatus(await pair({ code: 'ZZZZ-ZZZZ', jwk: await publicJwk() }, ip), 400);
      const { code } = await makeCode(owner);
      const limited = await pair({ code, jwk: await publicJwk() }, ip);
      expectStatus(limited, 429);
      assert.ok(Number(limited.headers['retry-after']) > 0);
      // The right code from that address waits; the code is not used up, and another address may use it.
      expectStatus(await pair({ code, jwk: await publicJwk() }), 200);
      t.clock.advance(PAIRING.redeemWindowSec * 1000);
      expectStatus(await pair({ code: 'ZZZZ-ZZZZ', jwk: await publicJwk() }, ip), 400);

      const busy = await signUp(t.app);
      for (let i = 0; i < PAIRING.createsPerHour; i++) await makeCode(busy);
      expectStatus(await t.app.inject({ method: 'POST', url: '/api/agents/pairing-codes', headers: busy.auth, payload: {} }), 429);
    });
  });
}
