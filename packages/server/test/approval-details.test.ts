import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { approvalChallenge, detailsDigestOf, verifyStepupToken } from '@mandate/protocol';
import { seconds } from '../src/clock.ts';
import { createAgent, type TestAgent } from './helpers/agents.ts';
import { expectStatus, json, remoteAddress, testApp, type TestApp } from './helpers/app.ts';
import { assertionOptions, grantAccess, type Owner, ownerWithPasskey, poll, respond } from './helpers/approvals.ts';
import { getPass, stepupVerify, verify, verifyBody } from './helpers/passes.ts';

const BODY = { amount: '12.00', currency: 'EUR', to: 'ACME' };
const DETAILS = { summary: 'Pay 12.00 EUR\nto ACME <b>now</b>', digest: detailsDigestOf(BODY) };
const OTHER_DIGEST = detailsDigestOf({ ...BODY, amount: '9999.00' });

/** Approvals bound to details (decisions §29), on both stores: the card, the challenge, the token, verification, receipts. */
for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`approvals bound to details (${backend})`, () => {
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

    const post = async (url: string, body: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url, remoteAddress: remoteAddress(), payload: { agent_id: agent.id, site: 'shop.example', agent_jwt: await agent.jwt(), ...body } });
    const file = async (url: string, body: Record<string, unknown>): Promise<string> => {
      const res = await post(url, body);
      expectStatus(res, 200);
      return json<{ txn_id: string }>(res).txn_id;
    };
    /** Approves with the software passkey over whatever challenge the options give; answers the challenge. */
    const approveWithPasskey = async (txn: string): Promise<string> => {
      const options = await assertionOptions(t, owner, txn);
      expectStatus(await respond(t, owner, txn, { approve: true, assertion: owner.authenticator.assert(options) }), 200);
      return options.challenge;
    };
    const stepupToken = async (txn: string): Promise<string> => {
      const body = json<{ stepup_token?: string }>(await poll(t, txn, await agent.jwt()));
      assert.ok(body.stepup_token, JSON.stringify(body));
      return body.stepup_token;
    };

    it('a step-up with details: the owner sees them, the challenge commits to them, the token carries the digest, one receipt is stored', async () => {
      const txn = await file('/api/v1/stepup', { action: 'pay', details: DETAILS });
      const me = json<{ pending: Record<string, unknown>[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
      assert.deepEqual(me.pending.find((p) => p['id'] === txn)?.['details'], DETAILS);

      const challenge = await approveWithPasskey(txn);
      const receipt = await t.services.store.receipts.get(txn);
      assert.ok(receipt);
      assert.deepEqual(
        { txnId: receipt.txnId, userId: receipt.userId, agentId: receipt.agentId, site: receipt.site, action: receipt.action, detailsDigest: receipt.detailsDigest },
        { txnId: txn, userId: owner.user.id, agentId: agent.id, site: 'shop.example', action: 'pay', detailsDigest: DETAILS.digest },
      );
      assert.match(receipt.nonce, /^[A-Za-z0-9_-]{22}$/, '128 bits, base64url');
      assert.equal(challenge, approvalChallenge({ txn, aud: 'shop.example', action: 'pay', detailsDigest: DETAILS.digest, user: owner.user.id, nonce: receipt.nonce }));
      const clientData = JSON.parse(Buffer.from(receipt.clientDataJson, 'base64url').toString('utf8')) as { type: string; challenge: string };
      assert.deepEqual([clientData.type, clientData.challenge], ['webauthn.get', challenge], 'the receipt keeps what the passkey signed');
      assert.equal(receipt.credentialId, owner.authenticator.credentialId.toString('base64url'));
      assert.equal((await t.services.store.receipts.listForUser(owner.user.id)).filter((r) => r.txnId === txn).length, 1);

      const token = await stepupToken(txn);
      const jwks = json<{ keys: unknown[] }>(await t.app.inject({ url: '/api/v1/jwks' }));
      const claims = await verifyStepupToken(token, { keys: jwks as never, issuer: 'http://localhost:8080', now: seconds(t.clock.now()), detailsDigest: DETAILS.digest });
      assert.equal(claims.details_digest, DETAILS.digest);
      const approved = await t.services.store.activity.list(owner.user.id, { before: 0, limit: 5, action: 'stepup.approved' });
      assert.equal(approved[0]?.detail['details_digest'], DETAILS.digest);
    });

    it('stepup/verify: a matching digest or none is accepted; another digest is stepup_wrong_details and uses nothing up', async () => {
      const base = { site: 'shop.example', action: 'pay' };
      const token = await stepupToken(await approved({ action: 'pay', details: DETAILS }));
      assert.equal((await stepupVerify(t, { ...base, stepup_token: token, details_digest: OTHER_DIGEST })).error, 'stepup_wrong_details');
      assert.equal((await stepupVerify(t, { ...base, stepup_token: token, details_digest: 'short' })).error, 'invalid_request');
      assert.equal((await stepupVerify(t, { ...base, stepup_token: token, details_digest: DETAILS.digest })).valid, true);
      const careless = await stepupToken(await approved({ action: 'pay', details: DETAILS }));
      assert.equal((await stepupVerify(t, { ...base, stepup_token: careless })).valid, true, 'a site that sends no digest accepts any details');
      const bare = await stepupToken(await approved({ action: 'pay' }));
      assert.equal((await stepupVerify(t, { ...base, stepup_token: bare, details_digest: DETAILS.digest })).error, 'stepup_wrong_details', 'a token without details is refused by a site that names them');
    });

    it('cloud verify takes details_digest alike', async () => {
      const pass = (await getPass(t, agent)).access_token;
      const token = await stepupToken(await approved({ action: 'pay', details: DETAILS }));
      const wrong = await verify(t, { ...(await verifyBody(t, agent, pass, { stepup_token: token })), action: 'pay', details_digest: OTHER_DIGEST });
      assert.equal(wrong.error, 'stepup_wrong_details');
      const right = await verify(t, { ...(await verifyBody(t, agent, pass, { stepup_token: token })), action: 'pay', details_digest: DETAILS.digest });
      assert.equal(right.stepup, true);
      const bad = await verify(t, { ...(await verifyBody(t, agent, pass, {})), details_digest: 42 });
      assert.equal(bad.error, 'invalid_request');
    });

    it('an agent approval with summary and digest: card, challenge and receipt; a denial stores no receipt', async () => {
      const txn = await file('/api/v1/agent-approval', { action: 'checkout:submit', details: { label: 'Pay now', ...DETAILS } });
      const me = json<{ pending: Record<string, unknown>[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth }));
      assert.deepEqual(me.pending.find((p) => p['id'] === txn)?.['details'], { label: 'Pay now', ...DETAILS });
      const challenge = await approveWithPasskey(txn);
      const receipt = await t.services.store.receipts.get(txn);
      assert.equal(receipt?.detailsDigest, DETAILS.digest);
      assert.equal(challenge, approvalChallenge({ txn, aud: 'shop.example', action: 'checkout:submit', detailsDigest: DETAILS.digest, user: owner.user.id, nonce: receipt!.nonce }));

      const plain = await file('/api/v1/agent-approval', { action: 'checkout:submit' });
      const plainChallenge = await approveWithPasskey(plain);
      const plainReceipt = await t.services.store.receipts.get(plain);
      assert.equal(plainReceipt?.detailsDigest, null);
      assert.equal(plainChallenge, approvalChallenge({ txn: plain, aud: 'shop.example', action: 'checkout:submit', detailsDigest: null, user: owner.user.id, nonce: plainReceipt!.nonce }));

      const denied = await file('/api/v1/stepup', { action: 'pay', details: DETAILS });
      expectStatus(await respond(t, owner, denied, { approve: false }), 200);
      assert.equal(await t.services.store.receipts.get(denied), undefined);
    });

    it('access requests keep a random challenge and leave no receipt', async () => {
      const other = await createAgent(t, owner, 'Reader');
      const txn = await grantAccess(t, owner, other);
      assert.equal(await t.services.store.receipts.get(txn), undefined);
    });

    it('bad details of any shape: 400 naming the field (422 for a wrong type), never 5xx', async () => {
      const cases: [string, Record<string, unknown>, number, RegExp][] = [
        ['/api/v1/stepup', { action: 'pay', details: { summary: 'x', digest: 'short' } }, 400, /details\.digest/],
        ['/api/v1/stepup', { action: 'pay', details: { summary: 'x'.repeat(501), digest: DETAILS.digest } }, 400, /details\.summary/],
        ['/api/v1/stepup', { action: 'pay', details: { summary: 'a\u202Eb', digest: DETAILS.digest } }, 400, /details\.summary/],
        ['/api/v1/stepup', { action: 'pay', details: { summary: '   ', digest: DETAILS.digest } }, 400, /details\.summary/],
        ['/api/v1/stepup', { action: 'pay', details: { ...DETAILS, extra: 1 } }, 400, /details\.extra/],
        ['/api/v1/stepup', { action: 'pay', details: { summary: 'x'.repeat(5000), digest: DETAILS.digest } }, 422, /summary/],
        ['/api/v1/stepup', { action: 'pay', details: { summary: 1, digest: DETAILS.digest } }, 422, /summary/],
        ['/api/v1/stepup', { action: 'pay', details: 'Pay' }, 422, /details/],
        ['/api/v1/stepup', { action: 'pay', details: { summary: 'x' } }, 422, /digest/],
        ['/api/v1/agent-approval', { action: 'pay', details: { summary: 'x' } }, 400, /details\.digest/],
        ['/api/v1/agent-approval', { action: 'pay', details: { digest: DETAILS.digest } }, 400, /details\.summary/],
        ['/api/v1/agent-approval', { action: 'pay', details: { summary: 'x', digest: 'A'.repeat(43) + '=' } }, 400, /details\.digest/],
      ];
      for (const [url, body, status, detail] of cases) {
        const res = await post(url, body);
        assert.equal(res.statusCode, status, `${url} ${JSON.stringify(body).slice(0, 80)}: ${res.body}`);
        assert.match(res.body, detail);
      }
    });

    async function approved(body: Record<string, unknown>): Promise<string> {
      const txn = await file('/api/v1/stepup', body);
      await approveWithPasskey(txn);
      return txn;
    }
  });
}
