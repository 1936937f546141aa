/**
 * docs/operators/consent.md cannot rot: every fenced block is marked; the PKCE snippet runs as
 * written; the link, with the example operator id and challenge replaced by real ones, opens the
 * consent page; the redirects shown have the keys the service sends; the token curl is sent as
 * written (its example values replaced) and the answers shown have the shape the service answers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { expectStatus, json, type TestApp, testApp } from './helpers/app.ts';
import { type Owner, ownerWithPasskey } from './helpers/approvals.ts';
import { type ActiveOperator, activeOperator } from './helpers/operators.ts';
import { markedBlocks } from './helpers/doc-examples.ts';

const PAGE = 'docs/operators/consent.md';
const EXAMPLE_ID = 'op_k5qhq3v4xbn2yqpmg2xq7tcl5e';

const { blocks, block } = markedBlocks(PAGE);
const sortedKeys = (o: object): string[] => Object.keys(o).sort();

describe(PAGE, () => {
  let t: TestApp;
  let op: ActiveOperator;
  let owner: Owner;
  const docUri = 'https://acme.example/mandate/callback';
  before(async () => {
    t = await testApp();
    op = await activeOperator(t, { redirectUris: [docUri] });
    owner = await ownerWithPasskey(t);
  });
  after(() => t.close());

  /** The documented link with the real operator and a real challenge; the person approves or declines. */
  async function decide(challenge: string, approve: boolean): Promise<URL> {
    const link = new URL(block('link', 'connect').trim());
    assert.equal(link.origin, 'https://mandate.example');
    link.searchParams.set('operator', op.id);
    link.searchParams.set('code_challenge', challenge);
    const fields = Object.fromEntries(link.searchParams);
    const start = await t.app.inject({ method: 'POST', url: '/api/connect/start', headers: owner.auth, payload: fields });
    expectStatus(start, 200);
    const s = json<{ consent_id: string; options: { challenge: string } }>(start);
    const res = approve
      ? await t.app.inject({ method: 'POST', url: '/api/connect/finish', headers: owner.auth, payload: { consent_id: s.consent_id, assertion: owner.authenticator.assert(s.options) } })
      : await t.app.inject({ method: 'POST', url: '/api/connect/deny', headers: owner.auth, payload: { consent_id: s.consent_id } });
    expectStatus(res, 200);
    return new URL(json<{ redirect: string }>(res).redirect);
  }
  const pkce = (): { codeVerifier: string; codeChallenge: string } =>
    JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', block('run', 'pkce')], { encoding: 'utf8' })) as { codeVerifier: string; codeChallenge: string };

  it('every fenced block is marked, and so checked here', () => {
    assert.deepEqual(blocks.filter((b) => b.marker === '').map((b) => b.text.slice(0, 60)), []);
    assert.equal(blocks.length, 7);
  });

  it('the PKCE snippet runs as written and makes a verifier and its S256 challenge', () => {
    const { codeVerifier, codeChallenge } = pkce();
    assert.match(codeVerifier, /^[A-Za-z0-9_-]{43}$/);
    assert.match(codeChallenge, /^[A-Za-z0-9_-]{43}$/);
  });

  it('the documented link opens the consent page (with a real operator id); the example id is an error page, not a redirect', async () => {
    const link = new URL(block('link', 'connect').trim());
    assert.equal(link.searchParams.get('operator'), EXAMPLE_ID);
    assert.equal(link.searchParams.get('code_challenge_method'), 'S256');
    const unknown = await t.app.inject({ url: `${link.pathname}${link.search}` });
    expectStatus(unknown, 404);
    assert.equal(unknown.headers.location, undefined);
    link.searchParams.set('operator', op.id);
    const shown = await t.app.inject({ url: `${link.pathname}${link.search}` });
    expectStatus(shown, 200);
    assert.match(shown.body, /Connect Acme agents\?/);
  });

  it('the redirects shown have the keys the service sends, on the documented URI', async () => {
    const { codeChallenge } = pkce();
    const approved = await decide(codeChallenge, true);
    const shownApproved = new URL(block('shown', 'approved').trim());
    assert.equal(`${shownApproved.origin}${shownApproved.pathname}`, docUri);
    assert.equal(`${approved.origin}${approved.pathname}`, docUri);
    assert.deepEqual([...approved.searchParams.keys()], [...shownApproved.searchParams.keys()]);
    assert.equal(approved.searchParams.get('state'), shownApproved.searchParams.get('state'));
    assert.equal(shownApproved.searchParams.get('iss'), 'https://mandate.example');
    assert.equal(approved.searchParams.get('iss'), t.config.baseUrl);
    const denied = await decide(codeChallenge, false);
    const shownDenied = new URL(block('shown', 'denied').trim());
    assert.deepEqual([...denied.searchParams.keys()], [...shownDenied.searchParams.keys()]);
    assert.equal(denied.searchParams.get('error'), 'access_denied');
    assert.equal(shownDenied.searchParams.get('error'), 'access_denied');
  });

  it('the token curl, sent as written, answers the shape shown; sent again, the refusal shown (and the connection ends)', async () => {
    const { codeVerifier, codeChallenge } = pkce();
    const code = (await decide(codeChallenge, true)).searchParams.get('code') as string;
    const text = block('run', 'token');
    const m = /curl -s -X POST https:\/\/mandate\.example(\/\S+)/.exec(text);
    assert.equal(m?.[1], '/api/v1/operator/token');
    assert.match(text, /-u "\$OPERATOR_ID:\$OPERATOR_SECRET"/);
    const documented = JSON.parse(/-d '([^']+)'/.exec(text)?.[1] ?? '') as Record<string, string>;
    assert.deepEqual(sortedKeys(documented), ['code', 'code_verifier', 'redirect_uri']);
    assert.equal(documented.redirect_uri, docUri);
    const payload = { ...documented, code, code_verifier: codeVerifier };
    const send = () => t.app.inject({ method: 'POST', url: '/api/v1/operator/token', headers: { ...op.auth, 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
    const res = await send();
    expectStatus(res, 200);
    const answer = json<Record<string, unknown>>(res);
    const shown = JSON.parse(block('answer', 'token')) as Record<string, unknown>;
    assert.deepEqual(sortedKeys(answer), sortedKeys(shown));
    for (const k of Object.keys(shown)) assert.equal(typeof answer[k], typeof shown[k], k);
    assert.equal(answer.max_agents, shown.max_agents);
    assert.match(String(shown.connection_id), /^cn_[a-z2-7]{26}$/);
    assert.match(String(shown.sub), /^[A-Za-z0-9_-]{43}$/);
    const again = await send();
    expectStatus(again, 400);
    assert.deepEqual(json(again), JSON.parse(block('answer', 'token-refused')));
    assert.equal((await t.services.store.connections.byId(String(answer.connection_id)))?.status, 'removed');
  });
});
