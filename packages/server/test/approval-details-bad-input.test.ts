import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { detailsDigestOf } from '@mandate/protocol';
import { createAgent, type TestAgent } from './helpers/agents.ts';
import { expectStatus, json, remoteAddress, testApp, type TestApp } from './helpers/app.ts';
import { grantAccess, type Owner, ownerWithPasskey } from './helpers/approvals.ts';
import { getPass, mintStepup, stepupVerify, verify, verifyBody } from './helpers/passes.ts';

// Every malformed shape of the details binding (decisions §28, §29), sent by a genuine agent (so
// that it gets past authentication and reaches the checks): `details` of POST /api/v1/stepup and
// POST /api/v1/agent-approval is a 400 naming the field or a 422, never a 5xx, and files nothing;
// `details_digest` of POST /api/v1/stepup/verify and POST /api/v1/verify is 200 + invalid_request
// (the verify endpoints' way, interface.md) and uses nothing up. On both stores: PostgreSQL refuses
// some text SQLite keeps.

const DIGEST = detailsDigestOf({ amount: '12.00', currency: 'EUR' });
const SUMMARY = 'Pay 12.00 EUR\nto ACME';

/** Digests that are not base64url SHA-256 in canonical form, and values that are no string at all. */
const BAD_DIGESTS: unknown[] = [
  '', 'short', 'A'.repeat(42), 'A'.repeat(44), `${'A'.repeat(42)}=`, `${DIGEST.slice(0, 42)}B`, `${DIGEST.slice(0, 42)}+`, '/'.repeat(43),
  'a'.repeat(64), '\u0000'.repeat(43), `${DIGEST.slice(0, 41)}\u00e9A`, ` ${DIGEST.slice(1)}`, 'x'.repeat(20_000), 42, 0, true, null, [], [DIGEST], { digest: DIGEST },
];

/** Summaries that are empty, too long, hide text or are no string. */
const BAD_SUMMARIES: unknown[] = [
  '', ' ', '\n', '\n\t ', 'x'.repeat(501), 'x'.repeat(5000), 'a\u0000b', 'a\u202Eb', 'a\u200Bb', 'a\uFEFFb', 'a\ud800b', 'a\r\nb', 'a\tb', 'a\u2028b', 'a\u2029b',
  'a\uE000b', 'a\u0085b', 'a\u001Bb', 42, true, null, [], [SUMMARY], { summary: SUMMARY },
];

/** Every `details` of a step-up that must be refused. */
const BAD_STEPUP_DETAILS: unknown[] = [
  null, 0, 'Pay', true, [], [{ summary: SUMMARY, digest: DIGEST }], {}, { summary: SUMMARY }, { digest: DIGEST },
  { summary: SUMMARY, digest: DIGEST, extra: 1 }, { summary: SUMMARY, digest: DIGEST, label: 'Pay now' },
  JSON.parse(`{"summary":${JSON.stringify(SUMMARY)},"digest":"${DIGEST}","__proto__":{"admin":true}}`) as unknown,
  ...BAD_SUMMARIES.map((summary) => ({ summary, digest: DIGEST })),
  ...BAD_DIGESTS.map((digest) => ({ summary: SUMMARY, digest })),
];

/** Every `details` of an agent approval that must be refused: the page facts may come along, the binding must be whole. */
const BAD_APPROVAL_DETAILS: unknown[] = [
  null, 'Pay', [], { label: 'Pay now', summary: SUMMARY }, { label: 'Pay now', digest: DIGEST },
  ...BAD_SUMMARIES.map((summary) => ({ label: 'Pay now', summary, digest: DIGEST })),
  ...BAD_DIGESTS.map((digest) => ({ label: 'Pay now', summary: SUMMARY, digest })),
];

const show = (v: unknown): string => (JSON.stringify(v) ?? String(v)).slice(0, 120);

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`malformed details and details digests (${backend})`, () => {
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
    const pendingCount = async () => json<{ pending: unknown[] }>(await t.app.inject({ url: '/api/me', headers: owner.auth })).pending.length;

    async function expectRefused(url: string, action: string, cases: unknown[]): Promise<void> {
      const before = await pendingCount();
      for (const details of cases) {
        const res = await post(url, { action, details });
        assert.ok(res.statusCode === 400 || res.statusCode === 422, `${url} details ${show(details)}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        assert.match(res.body, /details|body/, `${url} details ${show(details)}: the answer names the field: ${res.body.slice(0, 200)}`);
        if (res.statusCode === 400) assert.match(json<{ detail: string }>(res).detail, /^details/, `a 400 names details: ${res.body.slice(0, 200)}`);
      }
      assert.equal(await pendingCount(), before, `${url}: nothing was filed`);
      // The same request with whole details is accepted: the refusals were about the details.
      expectStatus(await post(url, { action, details: url.endsWith('stepup') ? { summary: SUMMARY, digest: DIGEST } : { label: 'Pay now', summary: SUMMARY, digest: DIGEST } }), 200);
    }

    it('POST /api/v1/stepup: every malformed details is 400 naming it or 422, never 5xx, and files nothing', async () => {
      await expectRefused('/api/v1/stepup', 'pay', BAD_STEPUP_DETAILS);
    });

    it('POST /api/v1/agent-approval: every malformed summary or digest is 400 naming it or 422, never 5xx, and files nothing', async () => {
      await expectRefused('/api/v1/agent-approval', 'checkout:submit', BAD_APPROVAL_DETAILS);
    });

    it('POST /api/v1/stepup/verify: every malformed details_digest is 200 + invalid_request, and the token stays usable', async () => {
      const token = await mintStepup(t, agent, { act: ['pay'], details_digest: DIGEST });
      const base = { stepup_token: token, site: 'shop.example', action: 'pay' };
      for (const details_digest of BAD_DIGESTS) {
        const answer = await stepupVerify(t, { ...base, details_digest });
        assert.deepEqual([answer.valid, answer.error], [false, 'invalid_request'], `details_digest ${show(details_digest)}: ${JSON.stringify(answer).slice(0, 200)}`);
      }
      assert.equal((await stepupVerify(t, { ...base, details_digest: DIGEST })).valid, true, 'not used up by the refusals');
    });

    it('POST /api/v1/verify: every malformed details_digest is 200 + invalid_request, and the step-up stays usable', async () => {
      const pass = (await getPass(t, agent)).access_token;
      const token = await mintStepup(t, agent, { act: ['pay'], details_digest: DIGEST });
      for (const details_digest of BAD_DIGESTS) {
        const answer = await verify(t, { ...(await verifyBody(t, agent, pass, { stepup_token: token })), action: 'pay', details_digest });
        assert.deepEqual([answer.valid, answer.error], [false, 'invalid_request'], `details_digest ${show(details_digest)}: ${JSON.stringify(answer).slice(0, 200)}`);
      }
      const right = await verify(t, { ...(await verifyBody(t, agent, pass, { stepup_token: token })), action: 'pay', details_digest: DIGEST });
      assert.equal(right.stepup, true, JSON.stringify(right));
    });
  });
}
