import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { approvalChallenge, detailsDigestOf, verifyReceipt, verifyStepupToken, type Receipt } from '@mandate/protocol';
import type { LightMyRequestResponse } from 'fastify';
import { seconds } from '../src/clock.ts';
import { createAgent, type TestAgent } from './helpers/agents.ts';
import { expectStatus, json, remoteAddress, testApp, type TestApp } from './helpers/app.ts';
import { assertionOptions, grantAccess, type Owner, ownerWithPasskey, poll, respond } from './helpers/approvals.ts';
import { getPass, mintPass, stepupVerify } from './helpers/passes.ts';

const ORIGIN = 'http://localhost:8080';
const ARGS = { tool: 'transfer', amount: '250.00', to: 'ACME' };
const DETAILS = { summary: 'Transfer 250.00 EUR to ACME', digest: detailsDigestOf(ARGS) };

interface SitePoll { status: string; stepup_token?: string; stepup_token_error?: string }

/** The site step-up (decisions §28) on both stores: filing with the pass, the owner's passkey, the long poll, the receipt. */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`site step-up (${backend})`, () => {
    let t: TestApp;
    let owner: Owner;
    let agent: TestAgent;
    before(async () => {
      t = await testApp({ backend });
      owner = await ownerWithPasskey(t);
      agent = await createAgent(t, owner, 'Payer');
      await grantAccess(t, owner, agent);
    });
    after(() => t.close());

    const passOf = async (a: TestAgent = agent, site = 'shop.example'): Promise<string> => (await getPass(t, a, site)).access_token;
    const postSite = (body: Record<string, unknown>): Promise<LightMyRequestResponse> =>
      t.app.inject({ method: 'POST', url: '/api/v1/stepup/site', remoteAddress: remoteAddress(), payload: body });
    const fileSite = async (pass: string, body: Record<string, unknown> = {}): Promise<string> => {
      const res = await postSite({ access_token: pass, action: 'transfer', ...body });
      expectStatus(res, 200);
      const created = json<{ txn_id: string; expires_in: number }>(res);
      assert.equal(created.expires_in, 300);
      return created.txn_id;
    };
    const pollRaw = (txn: string, headers: Record<string, string>, wait?: string): Promise<LightMyRequestResponse> =>
      t.app.inject({ method: 'GET', url: `/api/v1/stepup/site/${txn}${wait === undefined ? '' : `?wait=${wait}`}`, headers });
    const sitePoll = async (txn: string, pass: string, wait?: number): Promise<SitePoll> => {
      const res = await pollRaw(txn, { authorization: `Bearer ${pass}` }, wait === undefined ? undefined : String(wait));
      expectStatus(res, 200);
      return json<SitePoll>(res);
    };
    const approveWithPasskey = async (txn: string): Promise<string> => {
      const options = await assertionOptions(t, owner, txn);
      expectStatus(await respond(t, owner, txn, { approve: true, assertion: owner.authenticator.assert(options) }), 200);
      return options.challenge;
    };
    const receiptRaw = (txn: string, pass: string): Promise<LightMyRequestResponse> =>
      t.app.inject({ method: 'GET', url: `/api/v1/receipts/${txn}`, headers: { authorization: `Bearer ${pass}` } });

    it('filed without details: the card says the site asks; approved with the passkey; the token is delivered once and verifies', async () => {
      const pass = await passOf();
      const txn = await fileSite(pass);
      const me = json<{ pending: Record<string, unknown>[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
      const card = me.pending.find((p) => p['id'] === txn);
      assert.deepEqual([card?.['kind'], card?.['filed_by'], card?.['action'], card?.['site']], ['stepup', 'site', 'transfer', 'shop.example']);
      const inbox = await t.services.store.notifications.list(owner.user.id, { before: 0, limit: 5, since: 0 });
      assert.equal(inbox.find((n) => n.txnId === txn)?.title, 'shop.example asks you to approve an action for Payer');
      assert.deepEqual(await sitePoll(txn, pass), { status: 'pending' });

      const challenge = await approveWithPasskey(txn);
      const stored = await t.services.store.receipts.get(txn);
      assert.ok(stored, 'the approval left a receipt');
      assert.equal(challenge, approvalChallenge({ txn, aud: 'shop.example', action: 'transfer', detailsDigest: null, user: owner.user.id, nonce: stored.nonce }));

      // The agent cannot collect what the site filed.
      const byAgent = json<{ status: string; stepup_token?: string; stepup_token_error?: string }>(await poll(t, txn, await agent.jwt()));
      assert.equal(byAgent.stepup_token, undefined);
      assert.match(byAgent.stepup_token_error ?? '', /the site collects/);

      const first = await sitePoll(txn, pass);
      assert.equal(first.status, 'approved');
      assert.ok(first.stepup_token);
      assert.deepEqual(await sitePoll(txn, pass), { status: 'consumed', stepup_token_error: 'step-up token already delivered' });
      const claims = await verifyStepupToken(first.stepup_token, { keys: t.services.keys.resolver, issuer: ORIGIN, now: seconds(t.clock.now()), agentId: agent.id, site: 'shop.example', action: 'transfer' });
      assert.equal(claims.details_digest, undefined);
      const used = await stepupVerify(t, { stepup_token: first.stepup_token, site: 'shop.example', action: 'transfer', agent_id: agent.id, user_id: owner.user.id });
      assert.equal(used.valid, true, JSON.stringify(used));
      assert.equal((await stepupVerify(t, { stepup_token: first.stepup_token, site: 'shop.example', action: 'transfer' })).error, 'stepup_used_or_expired');
    });

    it('filed with details: the token carries details_digest; stepup/verify refuses other details; the receipt, fetched with the pass, verifies', async () => {
      const pass = await passOf();
      const txn = await fileSite(pass, { details: DETAILS });
      expectStatus(await receiptRaw(txn, pass), 409);
      const me = json<{ pending: Record<string, unknown>[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
      assert.deepEqual(me.pending.find((p) => p['id'] === txn)?.['details'], DETAILS);
      await approveWithPasskey(txn);

      const answer = await sitePoll(txn, pass, 5);
      assert.ok(answer.stepup_token, JSON.stringify(answer));
      const claims = await verifyStepupToken(answer.stepup_token, { keys: t.services.keys.resolver, issuer: ORIGIN, now: seconds(t.clock.now()), detailsDigest: DETAILS.digest });
      assert.equal(claims.details_digest, DETAILS.digest);
      const base = { stepup_token: answer.stepup_token, site: 'shop.example', action: 'transfer' };
      assert.equal((await stepupVerify(t, { ...base, details_digest: detailsDigestOf({ ...ARGS, amount: '9999.00' }) })).error, 'stepup_wrong_details');
      assert.equal((await stepupVerify(t, { ...base, details_digest: DETAILS.digest })).valid, true);

      const res = await receiptRaw(txn, pass);
      expectStatus(res, 200);
      const receipt = json<Receipt>(res);
      const jwks = json<{ keys: unknown[] }>(await t.app.inject({ url: '/api/v1/jwks' }));
      const verified = await verifyReceipt(receipt, { jwks: jwks as never, origin: ORIGIN, expected: { txn, aud: 'shop.example', action: 'transfer', details_digest: DETAILS.digest, user: owner.user.id } });
      assert.equal(verified.receipt.txn, txn);
      // A fresh pass of the same agent and access reads it too; the agent's own header still works.
      expectStatus(await receiptRaw(txn, await passOf()), 200);
      expectStatus(await t.app.inject({ url: `/api/v1/receipts/${txn}`, headers: { 'x-agent-jwt': await agent.jwt() } }), 200);
    });

    it('the long poll ends early on the answer, and at `wait` with pending', async () => {
      const pass = await passOf();
      const txn = await fileSite(pass);
      let started = performance.now();
      assert.deepEqual(await sitePoll(txn, pass, 1), { status: 'pending' });
      const waited = performance.now() - started;
      assert.ok(waited >= 950 && waited < 4000, `waited ${waited} ms for wait=1`);

      started = performance.now();
      const waiting = sitePoll(txn, pass, 20);
      await new Promise((r) => setTimeout(r, 400));
      await approveWithPasskey(txn);
      const answer = await waiting;
      const took = performance.now() - started;
      assert.equal(answer.status, 'approved');
      assert.ok(answer.stepup_token);
      assert.ok(took < 5000, `the answer came ${took} ms after the poll began, not at wait=20`);
    });

    it('8 concurrent polls of one approval: exactly one gets the token', async () => {
      const pass = await passOf();
      const txn = await fileSite(pass);
      const polls = Array.from({ length: 8 }, () => sitePoll(txn, pass, 10));
      await new Promise((r) => setTimeout(r, 300));
      await approveWithPasskey(txn);
      const answers = await Promise.all(polls);
      assert.equal(answers.filter((a) => a.stepup_token !== undefined).length, 1, JSON.stringify(answers));
      assert.deepEqual(new Set(answers.filter((a) => a.stepup_token === undefined).map((a) => a.status)), new Set(['consumed']));
    });

    it('denial and expiry', async () => {
      const pass = await passOf();
      const denied = await fileSite(pass);
      const waiting = sitePoll(denied, pass, 10);
      expectStatus(await respond(t, owner, denied, { approve: false }), 200);
      assert.deepEqual(await waiting, { status: 'denied' });
      expectStatus(await receiptRaw(denied, pass), 409);

      const unanswered = await fileSite(pass);
      t.clock.advance(301_000);
      assert.deepEqual(await sitePoll(unanswered, pass, 3), { status: 'expired' }, 'an expired request answers at once');

      const uncollected = await fileSite(pass);
      await approveWithPasskey(uncollected);
      t.clock.advance(301_000);
      assert.equal((await sitePoll(uncollected, await passOf())).status, 'expired', 'an approval not collected within 5 minutes');
    });

    it('only a live pass of the same agent, access and site polls; others read 404', async () => {
      const pass = await passOf();
      const txn = await fileSite(pass);
      assert.equal((await sitePoll(txn, await passOf())).status, 'pending', 'a refreshed pass of the same access');

      const other = await createAgent(t, owner, 'Other');
      await grantAccess(t, owner, other);
      expectStatus(await pollRaw(txn, { authorization: `Bearer ${await passOf(other)}` }), 404);
      await grantAccess(t, owner, agent, { site: 'other.example' });
      expectStatus(await pollRaw(txn, { authorization: `Bearer ${await passOf(agent, 'other.example')}` }), 404);
      expectStatus(await receiptRaw(txn, await passOf(other)), 404);
      // A validly signed pass of the same agent and site whose grant is not live: refused as revoked.
      expectStatus(await pollRaw(txn, { authorization: `Bearer ${await mintPass(t, agent, 'shop.example')}` }), 403);

      // A step-up the agent filed is not the site's to poll.
      const agentFiled = await t.app.inject({ method: 'POST', url: '/api/v1/stepup', payload: { agent_id: agent.id, site: 'shop.example', action: 'pay', agent_jwt: await agent.jwt() } });
      expectStatus(agentFiled, 200);
      const agentTxn = json<{ txn_id: string }>(agentFiled).txn_id;
      expectStatus(await pollRaw(agentTxn, { authorization: `Bearer ${pass}` }), 404);
      expectStatus(await receiptRaw(agentTxn, pass), 404);
      expectStatus(await pollRaw('t_aaaaaaaaaaaaaaaaaaaaaaaaaa', { authorization: `Bearer ${pass}` }), 404);
    });

    it('the step-up limit of the agent is shared with its own step-ups: 429 with Retry-After', async () => {
      const limited = await createAgent(t, owner, 'Limited');
      await grantAccess(t, owner, limited);
      const pass = await passOf(limited);
      for (let i = 0; i < 5; i++) {
        expectStatus(await t.app.inject({ method: 'POST', url: '/api/v1/stepup', payload: { agent_id: limited.id, site: 'shop.example', action: 'pay', agent_jwt: await limited.jwt() } }), 200);
        await fileSite(pass);
      }
      const res = await postSite({ access_token: pass, action: 'transfer' });
      expectStatus(res, 429);
      assert.ok(Number(res.headers['retry-after']) >= 1);
      assert.equal(json<{ detail: string }>(res).detail, 'rate limit exceeded');
    });

    it('a revoked agent or access: its pass files nothing and collects nothing (403)', async () => {
      const doomed = await createAgent(t, owner, 'Doomed');
      await grantAccess(t, owner, doomed);
      const pass = await passOf(doomed);
      const txn = await fileSite(pass);
      await approveWithPasskey(txn);
      const grant = await t.services.store.grants.activeFor(doomed.id, 'shop.example');
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/grants/${grant?.id}/revoke`, headers: owner.auth }), 200);
      expectStatus(await pollRaw(txn, { authorization: `Bearer ${pass}` }), 403);
      expectStatus(await postSite({ access_token: pass, action: 'transfer' }), 403);

      await grantAccess(t, owner, doomed);
      const fresh = await passOf(doomed);
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/agents/${doomed.id}/flag`, headers: owner.auth, payload: { flag: 'revoked' } }), 200);
      const refused = await postSite({ access_token: fresh, action: 'transfer' });
      expectStatus(refused, 403);
      assert.equal(json<{ detail: string }>(refused).detail, 'agent revoked by its owner');
      expectStatus(await receiptRaw(txn, fresh), 403);
    });

    it('the OpenAPI description has both routes and the receipt route\'s pass variant', async () => {
      const spec = json<{ paths: Record<string, Record<string, { description?: string; parameters?: { in: string; name: string }[] }>> }>(await t.app.inject({ url: '/openapi.json' }));
      assert.ok(spec.paths['/api/v1/stepup/site']?.['post']);
      const poll = spec.paths['/api/v1/stepup/site/{txn_id}']?.['get'];
      assert.ok(poll?.parameters?.some((p) => p.in === 'query' && p.name === 'wait'));
      const receipts = spec.paths['/api/v1/receipts/{txn_id}']?.['get']?.description ?? '';
      assert.match(receipts, /Authorization: Bearer <pass>/);
      assert.doesNotMatch(receipts, /not offered yet/);
    });

    it('bad input of many shapes: a clear 4xx, never 5xx', async () => {
      const pass = await passOf();
      const expired = await mintPass(t, agent, 'shop.example', { iat: seconds(t.clock.now()) - 700, exp: seconds(t.clock.now()) - 100 });
      const posts: [Record<string, unknown>, number, RegExp?][] = [
        [{ action: 'transfer' }, 422, /access_token/],
        [{ access_token: pass }, 422, /action/],
        [{ access_token: '', action: 'transfer' }, 422],
        [{ access_token: 42, action: 'transfer' }, 422],
        [{ access_token: 'x', action: 'transfer' }, 401, /invalid pass/],
        [{ access_token: 'eyJhbGciOiJub25lIn0.e30.', action: 'transfer' }, 401],
        [{ access_token: await agent.jwt(), action: 'transfer' }, 401],
        [{ access_token: expired, action: 'transfer' }, 401, /expired/],
        [{ access_token: pass, action: '' }, 400, /invalid action/],
        [{ access_token: pass, action: 'x'.repeat(201) }, 400, /invalid action/],
        [{ access_token: pass, action: 'pay\u202Enow' }, 400, /invalid action/],
        [{ access_token: pass, action: 'transfer', details: { summary: 'x', digest: 'short' } }, 400, /details\.digest/],
        [{ access_token: pass, action: 'transfer', details: { summary: '', digest: DETAILS.digest } }, 400, /details\.summary/],
        [{ access_token: pass, action: 'transfer', details: { summary: 1, digest: DETAILS.digest } }, 422, /summary/],
        [{ access_token: pass, action: 'transfer', details: 'x' }, 422, /details/],
      ];
      for (const [body, status, detail] of posts) {
        const res = await postSite(body);
        assert.equal(res.statusCode, status, `${JSON.stringify(body).slice(0, 100)}: ${res.body}`);
        if (detail) assert.match(res.body, detail);
      }
      for (const payload of ['{', '[]', 'null', '"x"']) {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/stepup/site', headers: { 'content-type': 'application/json' }, payload });
        assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${payload}: ${res.statusCode}`);
      }

      const txn = await fileSite(pass);
      const auth = { authorization: `Bearer ${pass}` };
      const polls: [string, Record<string, string>, string | undefined, number][] = [
        ['x', auth, undefined, 400],
        ['t_%00', auth, undefined, 422],
        [txn, auth, '26', 400],
        [txn, auth, '-1', 400],
        [txn, auth, '1.5', 400],
        [txn, auth, 'abc', 400],
        [txn, auth, '%00', 422],
        [txn, auth, '1e1', 400],
        [txn, auth, '', 400],
        [txn, {}, undefined, 401],
        [txn, { authorization: 'Bearer' }, undefined, 401],
        [txn, { authorization: 'Bearer x.y.z' }, undefined, 401],
        [txn, { authorization: `Basic ${pass}` }, undefined, 401],
        [txn, { authorization: `Bearer ${expired}` }, undefined, 401],
      ];
      for (const [id, headers, wait, status] of polls) {
        const res = await pollRaw(id, headers, wait);
        assert.equal(res.statusCode, status, `${id} ${JSON.stringify(headers).slice(0, 40)} wait=${wait}: ${res.body}`);
        const detail = json<{ detail: unknown }>(res).detail;
        assert.ok(typeof detail === 'string' || Array.isArray(detail), 'a detail (a list for 422)');
      }
      expectStatus(await t.app.inject({ url: `/api/v1/stepup/site/${txn}?wait=0&wait=1`, headers: auth }), 422);
      expectStatus(await receiptRaw('x', pass), 400);
      expectStatus(await t.app.inject({ url: `/api/v1/receipts/${txn}`, headers: { authorization: 'Bearer nonsense' } }), 401);
    });
  });
}
