import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AccessRequiredError, AgentRevokedError, MandateError } from '../src/client/errors.ts';
import { ServiceClient } from '../src/client/http.ts';
import { PassKeeper } from '../src/passes/pass-keeper.ts';
import { needsRefresh, refreshDueAt } from '../src/passes/refresh-policy.ts';
import { MemoryStateStore } from '../src/state/memory-state-store.ts';
import type { StateStore } from '../src/state/state-store.ts';
import { FakeClock } from './helpers/fake-clock.ts';
import { FakeService, tokenAnswer } from './helpers/fake-service.ts';

const SITE = 'shop.example';

function keeper(service: FakeService, clock: FakeClock, store: StateStore = new MemoryStateStore(), agentId = 'ag_one') {
  const client = new ServiceClient({ serviceUrl: 'http://mandate.test', fetch: service.fetch, clock });
  return { store, keeper: new PassKeeper({ client, store, clock, agentId, agentJwt: async () => 'agent-jwt' }) };
}

const sentRefreshTokens = (s: FakeService) => s.callsTo('POST /api/v1/token').map((c) => c.body?.['refresh_token'] ?? null);

describe('refresh policy', () => {
  it('renews a 600 s pass one minute before it expires', () => {
    const pass = { issuedAt: 0, expiresAt: 600_000 };
    assert.equal(refreshDueAt(pass), 540_000);
    assert.equal(needsRefresh(pass, 539_999), false);
    assert.equal(needsRefresh(pass, 540_000), true);
    assert.equal(needsRefresh(pass, 700_000), true);
  });

  it('renews a short pass (grant ending soon) after half its life', () => {
    const pass = { issuedAt: 0, expiresAt: 40_000 };
    assert.equal(needsRefresh(pass, 19_999), false);
    assert.equal(needsRefresh(pass, 20_000), true);
  });
});

describe('pass keeper (fake service, fake clock)', () => {
  it('gets the first pass without a refresh token, reuses it while fresh, then rotates', async () => {
    const service = new FakeService().on('POST /api/v1/token', tokenAnswer(1), tokenAnswer(2), tokenAnswer(3));
    const clock = new FakeClock();
    const { keeper: k, store } = keeper(service, clock);

    const first = await k.get(SITE);
    assert.equal(first.accessToken, 'pass-1');
    assert.equal(first.fetched, true);
    assert.equal(first.expiresAt, clock.now() + 600_000);

    clock.advance(539_000);
    const reused = await k.get(SITE);
    assert.equal(reused.accessToken, 'pass-1');
    assert.equal(reused.fetched, false);
    assert.equal(service.callsTo('POST /api/v1/token').length, 1, 'no call while the pass is fresh');

    clock.advance(1_000); // now within a minute of expiry
    assert.equal((await k.get(SITE)).accessToken, 'pass-2');
    clock.advance(600_000);
    assert.equal((await k.get(SITE)).accessToken, 'pass-3');

    assert.deepEqual(sentRefreshTokens(service), [null, 'refresh-1', 'refresh-2']);
    assert.equal((await store.read(SITE))?.refreshToken, 'refresh-3', 'the newest refresh token is kept');
    const body = service.callsTo('POST /api/v1/token')[0]?.body;
    assert.deepEqual(body, { agent_id: 'ag_one', site: SITE, agent_jwt: 'agent-jwt' });
  });

  it('goes on after a restart with the refresh token kept in the store', async () => {
    const store = new MemoryStateStore();
    const clock = new FakeClock();
    const before = new FakeService().on('POST /api/v1/token', tokenAnswer(1));
    await keeper(before, clock, store).keeper.get(SITE);

    clock.advance(10 * 60_000);
    const after = new FakeService().on('POST /api/v1/token', tokenAnswer(2));
    const pass = await keeper(after, clock, store).keeper.get(SITE);
    assert.equal(pass.accessToken, 'pass-2');
    assert.deepEqual(sentRefreshTokens(after), ['refresh-1']);
  });

  it('ignores state kept for another agent id', async () => {
    const store = new MemoryStateStore();
    const clock = new FakeClock();
    await keeper(new FakeService().on('POST /api/v1/token', tokenAnswer(1)), clock, store, 'ag_one').keeper.get(SITE);
    const other = new FakeService().on('POST /api/v1/token', tokenAnswer(9));
    assert.equal((await keeper(other, clock, store, 'ag_two').keeper.get(SITE)).accessToken, 'pass-9');
    assert.deepEqual(sentRefreshTokens(other), [null]);
  });

  it('renews once for concurrent callers', async () => {
    const service = new FakeService().on('POST /api/v1/token', tokenAnswer(1));
    const { keeper: k } = keeper(service, new FakeClock());
    const passes = await Promise.all([k.get(SITE), k.get(SITE), k.get(SITE)]);
    assert.deepEqual(passes.map((p) => p.accessToken), ['pass-1', 'pass-1', 'pass-1']);
    assert.equal(service.callsTo('POST /api/v1/token').length, 1);
  });

  it('force renews even a fresh pass (the site said token_expired)', async () => {
    const service = new FakeService().on('POST /api/v1/token', tokenAnswer(1), tokenAnswer(2));
    const { keeper: k } = keeper(service, new FakeClock());
    await k.get(SITE);
    assert.equal((await k.get(SITE, { force: true })).accessToken, 'pass-2');
    assert.deepEqual(sentRefreshTokens(service), [null, 'refresh-1']);
  });

  it('after a void refresh token, tries once without one (a new approval within the hour)', async () => {
    const service = new FakeService().on('POST /api/v1/token',
      tokenAnswer(1),
      { status: 401, body: { detail: 'refresh token already used or invalid', next_step: 'use the latest' } },
      tokenAnswer(2));
    const clock = new FakeClock();
    const { keeper: k } = keeper(service, clock);
    await k.get(SITE);
    clock.advance(600_000);
    assert.equal((await k.get(SITE)).accessToken, 'pass-2');
    assert.deepEqual(sentRefreshTokens(service), [null, 'refresh-1', null]);
  });

  it('says clearly that access must be requested again, keeps the service\'s words, and forgets the dead state', async () => {
    const oneHour = 'a pass without refresh_token is issued only within one hour of the approval';
    const service = new FakeService().on('POST /api/v1/token',
      tokenAnswer(1),
      { status: 401, body: { detail: 'refresh token already used or invalid', next_step: 'use the latest' } },
      { status: 401, body: { detail: oneHour, next_step: 'send the refresh_token from your last token response' } });
    const clock = new FakeClock();
    const { keeper: k, store } = keeper(service, clock);
    await k.get(SITE);
    clock.advance(600_000);
    await assert.rejects(k.get(SITE), (e: unknown) => {
      assert.ok(e instanceof AccessRequiredError);
      assert.equal(e.code, 'access_required');
      assert.equal(e.site, SITE);
      assert.equal(e.status, 401);
      assert.equal(e.detail, oneHour);
      assert.match(e.nextStep ?? '', /refresh_token/);
      return true;
    });
    assert.equal(await store.read(SITE), undefined);
  });

  it('maps 403 no approved access to AccessRequiredError, and a revoked agent to AgentRevokedError', async () => {
    const noAccess = new FakeService().on('POST /api/v1/token', { status: 403, body: { detail: 'no approved access for this site', next_step: 'ask the owner for access again: POST /api/v1/authz-requests' } });
    await assert.rejects(keeper(noAccess, new FakeClock()).keeper.get(SITE), AccessRequiredError);

    const store = new MemoryStateStore();
    const clock = new FakeClock();
    const revoked = new FakeService().on('POST /api/v1/token', tokenAnswer(1), { status: 403, body: { detail: 'agent revoked by its owner', next_step: 'stop' } });
    const k = keeper(revoked, clock, store).keeper;
    await k.get(SITE);
    clock.advance(600_000);
    await assert.rejects(k.get(SITE), (e: unknown) => e instanceof AgentRevokedError && e.status === 403 && e.detail === 'agent revoked by its owner');
    assert.equal(revoked.callsTo('POST /api/v1/token').length, 2, 'no fallback for a revoked agent');
  });

  it('does not call a refused agent JWT an access problem', async () => {
    const service = new FakeService().on('POST /api/v1/token', { status: 401, body: { detail: 'invalid agent_jwt: signature', next_step: 'sign a fresh agent JWT' } });
    await assert.rejects(keeper(service, new FakeClock()).keeper.get(SITE), (e: unknown) => e instanceof MandateError && e.code === 'service_error' && e.status === 401);
  });

  it('refuses a token answer without the fields it needs', async () => {
    const service = new FakeService().on('POST /api/v1/token', { status: 200, body: { access_token: 'x' } });
    await assert.rejects(keeper(service, new FakeClock()).keeper.get(SITE), /lacks access_token/);
  });
});
