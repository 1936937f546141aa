import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { contentDigest, signDirectory, WBA_DIRECTORY_PATH } from '@mandate/protocol';
import { testApp, json, expectStatus, type TestApp } from './helpers/app.ts';
import { createAgent, type TestAgent } from './helpers/agents.ts';
import { publishKey, registerKey, wbaKey, type WbaKey } from './helpers/wba.ts';
import { seconds } from '../src/clock.ts';

const MEDIA = 'application/http-message-signatures-directory+json';

/** Web Bot Auth keys, proofs and directories over HTTP (decisions §22), on SQLite and PostgreSQL. */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`web bot auth keys and directories (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend });
    });
    after(() => t.close());

    const keyCall = async (agent: TestAgent, jwk: unknown) => t.app.inject({ method: 'POST', url: '/api/v1/wba/key', payload: { agent_id: agent.id, agent_jwt: await agent.jwt(), jwk } });
    const proofCall = async (agent: TestAgent, headers: unknown) => t.app.inject({ method: 'POST', url: '/api/v1/wba/proof', payload: { agent_id: agent.id, agent_jwt: await agent.jwt(), headers } });
    const sign = (key: WbaKey, over: { authority?: string; body?: string; created?: number; lifetimeSec?: number } & { host: string; directory: string }) =>
      signDirectory({ authority: over.authority ?? over.host, body: over.body ?? over.directory, key, created: over.created ?? seconds(t.clock.now()), lifetimeSec: over.lifetimeSec ?? 3600 });

    it('registers a key: the address, the host and the exact directory bytes; the label stays across key changes', async () => {
      const agent = await createAgent(t);
      const key = wbaKey();
      const reg = await registerKey(t, agent, key);
      assert.match(reg.signature_agent, /^http:\/\/localhost:8080\/wba\/a-[0-9a-f]{12}$/);
      assert.equal(reg.host, 'localhost:8080');
      assert.equal(reg.directory, `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"${key.keyid}","x":"${key.jwk.x}","use":"sig"}]}`);
      const again = await registerKey(t, agent, wbaKey());
      assert.equal(again.signature_agent, reg.signature_agent);
      assert.notEqual(again.directory, reg.directory);
    });

    it('refuses bad keys with 400 and a detail; another agent\'s key with 409; a bad JWT with 401', async () => {
      const agent = await createAgent(t);
      const { jwk, privateJwk } = wbaKey();
      for (const [bad, re] of [
        [{ ...jwk, kty: 'EC' }, /kty OKP/], [{ ...jwk, crv: 'X25519' }, /Ed25519/], [privateJwk, /private/],
        [{ ...jwk, x: jwk.x.slice(0, 40) }, /32 bytes/], [{ ...jwk, x: `${jwk.x}AAAA` }, /32 bytes/],
      ] as const) {
        const res = await keyCall(agent, bad);
        expectStatus(res, 400);
        assert.match(json<{ detail: string }>(res).detail, re);
      }
      for (const shape of [null, 'key', [], { kty: 1 }]) assert.ok([400, 422].includes((await keyCall(agent, shape)).statusCode));
      const other = await createAgent(t);
      expectStatus(await keyCall(other, jwk), 200);
      const taken = await keyCall(agent, jwk);
      expectStatus(taken, 409);
      assert.match(json<{ detail: string }>(taken).detail, /another agent/);
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/wba/key', payload: { agent_id: agent.id, agent_jwt: 'nope', jwk } });
      expectStatus(res, 401);
    });

    it('serves the directory after the proof, by path and well-known path, with the proof headers and caching', async () => {
      const agent = await createAgent(t);
      const key = wbaKey();
      const reg = await registerKey(t, agent, key);
      const path = new URL(reg.signature_agent).pathname;
      const before = await t.app.inject({ url: path });
      expectStatus(before, 200);
      assert.equal(before.body, '{"keys":[]}', 'no keys until the proof is checked');
      const headers = sign(key, reg);
      expectStatus(await proofCall(agent, headers), 200);
      for (const url of [path, `${path}${WBA_DIRECTORY_PATH}`]) {
        const res = await t.app.inject({ url });
        expectStatus(res, 200);
        assert.equal(res.body, reg.directory);
        assert.equal(res.headers['content-type'], MEDIA);
        assert.equal(res.headers['cache-control'], 'max-age=300');
        assert.equal(res.headers['content-digest'], headers['Content-Digest']);
        assert.equal(res.headers['signature-input'], headers['Signature-Input']);
        assert.equal(res.headers['signature'], headers.Signature);
      }
      assert.equal((await t.app.inject({ url: '/wba/a-000000000000' })).body, '{"keys":[]}');
      expectStatus(await t.app.inject({ url: '/wba/not-a-label' }), 200);
      // Without WBA_AGENT_DOMAIN no Host serves a directory.
      expectStatus(await t.app.inject({ url: WBA_DIRECTORY_PATH }), 404);
      // A new key: the old proof is gone, the directory empty until the new proof.
      await registerKey(t, agent, wbaKey());
      assert.equal((await t.app.inject({ url: path })).body, '{"keys":[]}');
    });

    it('refuses proofs that break a rule, each with a 400 detail', async () => {
      const agent = await createAgent(t);
      const key = wbaKey();
      const none = await proofCall(agent, sign(key, { host: 'localhost:8080', directory: '{}' }));
      expectStatus(none, 400);
      assert.match(json<{ detail: string }>(none).detail, /no key yet/);
      const reg = await registerKey(t, agent, key);
      const now = seconds(t.clock.now());
      const good = sign(key, reg);
      const cases: [string, unknown, RegExp][] = [
        ['tampered digest', { ...good, 'Content-Digest': contentDigest(`${reg.directory} `) }, /Content-Digest/],
        ['tampered signature', { ...good, Signature: good.Signature.replace(/:(.)/, (_m, c: string) => `:${c === 'A' ? 'B' : 'A'}`) }, /does not verify/],
        ['expired', sign(key, { ...reg, created: now - 3600, lifetimeSec: 3000 }), /expired/],
        ['longer than 3600 s', sign(key, { ...reg, lifetimeSec: 3601 }), /3600/],
        ['wrong key', sign(wbaKey(), reg), /keyid/],
        ['wrong authority', sign(key, { ...reg, authority: 'evil.example' }), /does not verify/],
        ['wrong tag', { ...good, 'Signature-Input': good['Signature-Input'].replace('http-message-signatures-directory', 'web-bot-auth') }, /tag/],
        ['not a dictionary', { ...good, 'Signature-Input': '((((' }, /dictionary/],
        ['labels differ', { ...good, Signature: good.Signature.replace('binding0', 'other') }, /no label/],
        ['created in the future', sign(key, { ...reg, created: now + 600, lifetimeSec: 60 }), /future/],
        ['not covering content-digest', { ...good, 'Signature-Input': good['Signature-Input'].replace(' "content-digest"', '') }, /cover exactly/],
      ];
      for (const [name, headers, re] of cases) {
        const res = await proofCall(agent, headers);
        assert.equal(res.statusCode, 400, `${name}: ${res.body}`);
        assert.match(json<{ detail: string }>(res).detail, re, name);
      }
      for (const shape of [null, {}, { 'Content-Digest': 'x' }, { ...good, Extra: 'x' }, { ...good, Signature: 5 }]) {
        const res = await proofCall(agent, shape);
        assert.ok([400, 422].includes(res.statusCode), `${JSON.stringify(shape)}: ${res.statusCode}`);
      }
      expectStatus(await proofCall(agent, good), 200);
    });

    it('serves {"keys":[]} once the agent is revoked or removed', async () => {
      for (const how of ['revoke', 'remove'] as const) {
        const agent = await createAgent(t);
        const reg = await publishKey(t, agent);
        const path = new URL(reg.signature_agent).pathname;
        assert.equal((await t.app.inject({ url: path })).body, reg.directory);
        const res = how === 'revoke'
          ? await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: agent.owner.auth, payload: { flag: 'revoked' } })
          : await t.app.inject({ method: 'DELETE', url: `/api/agents/${agent.id}`, headers: agent.owner.auth });
        expectStatus(res, 200);
        const after = await t.app.inject({ url: path });
        assert.equal(after.body, '{"keys":[]}', how);
        assert.equal(after.headers['signature'], undefined);
      }
    });

    it('account deletion erases the keys; the export lists them without secrets', async () => {
      const agent = await createAgent(t);
      const reg = await publishKey(t, agent);
      const exported = await t.app.inject({ url: '/api/export', headers: agent.owner.auth });
      expectStatus(exported, 200);
      const keys = (JSON.parse(exported.body) as { wba_keys: { agent_id: string; kid: string; public_key: { x: string } }[] }).wba_keys;
      assert.deepEqual(keys.map((k) => [k.agent_id, k.kid, k.public_key.x]), [[agent.id, reg.key.keyid, reg.key.jwk.x]]);
      assert.ok(!exported.body.includes(String(reg.key.privateJwk.d)));
      const del = await t.app.inject({ method: 'POST', url: '/api/account/delete', headers: agent.owner.auth, payload: { confirm: agent.owner.email, password: agent.owner.password } });
      expectStatus(del, 200);
      assert.equal(await t.services.store.wbaKeys.byAgent(agent.id), undefined);
      assert.equal((await t.app.inject({ url: new URL(reg.signature_agent).pathname })).body, '{"keys":[]}');
    });
  });
}

describe('web bot auth with WBA_AGENT_DOMAIN: directories by Host', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp({ env: { WBA_AGENT_DOMAIN: 'agents.example.com' } });
  });
  after(() => t.close());

  it('gives https://a-<12 hex>.<domain>, signs that host, and serves by Host only', async () => {
    const agent = await createAgent(t);
    const reg = await publishKey(t, agent);
    assert.match(reg.signature_agent, /^https:\/\/a-[0-9a-f]{12}\.agents\.example\.com$/);
    const host = new URL(reg.signature_agent).host;
    assert.equal(reg.host, host);
    const res = await t.app.inject({ url: WBA_DIRECTORY_PATH, headers: { host } });
    expectStatus(res, 200);
    assert.equal(res.body, reg.directory);
    assert.ok(res.headers['signature']);
    expectStatus(await t.app.inject({ url: WBA_DIRECTORY_PATH, headers: { host: 'localhost:8080' } }), 404);
    expectStatus(await t.app.inject({ url: WBA_DIRECTORY_PATH, headers: { host: 'a-000000000000.other.example' } }), 404);
    assert.equal((await t.app.inject({ url: WBA_DIRECTORY_PATH, headers: { host: 'a-000000000000.agents.example.com' } })).body, '{"keys":[]}');
  });
});
