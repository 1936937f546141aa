import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAgent, type TestAgent } from './helpers/agents.ts';
import { expectStatus, json, signUp, testApp, type TestApp } from './helpers/app.ts';
import { postAccessRequest } from './helpers/approvals.ts';

// Issue 27, item 1: a body of an agent endpoint with several problems gets ONE 422 listing each of
// them (decisions §10), not one problem per attempt; a body the schema accepts is answered as before.

type Item = { loc: (string | number)[]; msg: string; type: string };
const items = (res: { json(): unknown }) => (res.json() as { detail: Item[] }).detail;
const places = (res: { json(): unknown }) => items(res).map((i) => i.loc.join('.')).sort();

describe('agent bodies: every problem in one 422', () => {
  let t: TestApp;
  let agent: TestAgent;
  before(async () => {
    t = await testApp();
    agent = await createAgent(t, await signUp(t.app));
  });
  after(() => t.close());

  const post = (url: string, payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url, payload });

  it('POST /api/v1/authz-requests: missing agent_jwt, a bad site, bad scopes and an id that is no agent id, together', async () => {
    const res = await post('/api/v1/authz-requests', { agent_id: 'bob', site: 'https://shop.example/cart', scopes: ['Orders Read'] });
    expectStatus(res, 422);
    assert.deepEqual(places(res), ['body.agent_id', 'body.agent_jwt', 'body.scopes', 'body.site']);
    const byPlace = new Map(items(res).map((i) => [i.loc.join('.'), i]));
    assert.deepEqual(byPlace.get('body.agent_jwt'), { loc: ['body', 'agent_jwt'], msg: 'field required', type: 'missing' });
    assert.match(byPlace.get('body.site')?.msg ?? '', /^invalid site: use the host name of the site/);
    assert.match(byPlace.get('body.scopes')?.msg ?? '', /^invalid scope "Orders Read": use only lower-case letters/);
    assert.match(byPlace.get('body.agent_id')?.msg ?? '', /^not an agent id: agent ids read ag_/);
  });

  it('a field of the wrong type is reported once, by the schema', async () => {
    const res = await post('/api/v1/authz-requests', { agent_id: agent.id, site: 42, scopes: [], agent_jwt: await agent.jwt() });
    expectStatus(res, 422);
    assert.deepEqual(items(res), [
      { loc: ['body', 'site'], msg: 'must be string', type: 'string_type' },
      { loc: ['body', 'scopes'], msg: 'invalid scopes: send 1 to 20 distinct scopes (got 0)', type: 'invalid_scopes' },
    ]);
  });

  it('POST /api/v1/stepup and /api/v1/token list their problems together too', async () => {
    const stepup = await post('/api/v1/stepup', { agent_id: 'ag_NOPE', site: 'a..b', action: '' });
    expectStatus(stepup, 422);
    assert.deepEqual(places(stepup), ['body.action', 'body.agent_id', 'body.agent_jwt', 'body.site']);
    const token = await post('/api/v1/token', { agent_id: 'someone', site: 'shop.example' });
    expectStatus(token, 422);
    assert.deepEqual(places(token), ['body.agent_id', 'body.agent_jwt']);
  });

  it('a body the schema accepts is answered as before: the domain\'s 400, 401 and 200', async () => {
    const badScope = await postAccessRequest(t, agent, { scopes: ['Orders'] });
    assert.equal(badScope.statusCode, 400, badScope.body);
    assert.match((badScope.json() as { detail: string }).detail, /invalid scope "Orders"/);
    const badSite = await postAccessRequest(t, agent, { site: 'https://shop.example' });
    assert.equal(badSite.statusCode, 400, badSite.body);
    const unknown = await post('/api/v1/authz-requests', { agent_id: 'bob', site: 'shop.example', scopes: ['list'], agent_jwt: await agent.jwt() });
    assert.equal(unknown.statusCode, 401, unknown.body);
    const ok = await postAccessRequest(t, agent, { site: 'fine.example', scopes: ['list'] });
    expectStatus(ok, 200);
    assert.match(json<{ txn_id: string }>(ok).txn_id, /^t_/);
  });
});
