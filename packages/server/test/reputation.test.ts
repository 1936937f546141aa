import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SignJWT, generateKeyPair } from 'jose';
import { STEPUP_TYP, REVOCATION_TYP } from '@mandate/protocol';
import { seconds } from '../src/clock.ts';
import { REPORT_KINDS, REPORT_WEIGHTS, ageBonus, countKinds, reputationScore } from '../src/domain/reputation/score.ts';
import type { ReportKind } from '../src/store/ports/index.ts';
import { testApp, signUp, json, type TestApp } from './helpers/app.ts';
import { createAgent } from './helpers/agents.ts';
import { mintPass } from './helpers/passes.ts';

const DAY = 86_400_000;
const kindArb = fc.constantFrom<ReportKind>(...REPORT_KINDS);
const fresh = { ageDays: 0, revoked: false, flaggedSuspicious: false };

describe('reputation formula', () => {
  it('starts at 50 and gains one point per full 30 days, at most 10', () => {
    assert.equal(reputationScore({ ...fresh, latestPerSite: [] }).score, 50);
    assert.deepEqual([0, 29, 30, 59, 60, 299, 300, 5000].map(ageBonus), [0, 0, 1, 1, 2, 9, 10, 10]);
    assert.equal(reputationScore({ ...fresh, ageDays: 1000, latestPerSite: ['good'] }).score, 62);
  });

  it('weighs each kind as decided', () => {
    assert.deepEqual(REPORT_WEIGHTS, { good: 2, policy: -3, scraping: -3, spam: -5, abuse: -8, fraud: -10 });
    for (const kind of REPORT_KINDS) assert.equal(reputationScore({ ...fresh, latestPerSite: [kind] }).score, 50 + REPORT_WEIGHTS[kind]);
    assert.equal(reputationScore({ ...fresh, latestPerSite: ['fraud', 'fraud', 'abuse', 'good'] }).score, 24);
  });

  it('flags suspicious below 30 with at least 3 sites, or when the owner flagged it; revoked scores 0', () => {
    assert.deepEqual(reputationScore({ ...fresh, latestPerSite: ['fraud', 'fraud', 'spam'] }), { score: 25, flag: 'suspicious' });
    assert.deepEqual(reputationScore({ ...fresh, latestPerSite: ['fraud', 'fraud', 'policy'] }), { score: 27, flag: 'suspicious' });
    assert.deepEqual(reputationScore({ ...fresh, latestPerSite: ['fraud', 'fraud'] }), { score: 30, flag: 'ok' });
    assert.deepEqual(reputationScore({ ...fresh, ageDays: 90, latestPerSite: ['fraud', 'fraud', 'spam'] }), { score: 28, flag: 'suspicious' });
    assert.deepEqual(reputationScore({ ...fresh, ageDays: 150, latestPerSite: ['fraud', 'fraud', 'spam'] }), { score: 30, flag: 'ok' });
    assert.deepEqual(reputationScore({ ...fresh, flaggedSuspicious: true, latestPerSite: [] }), { score: 50, flag: 'suspicious' });
    assert.deepEqual(reputationScore({ ...fresh, revoked: true, latestPerSite: ['good'] }), { score: 0, flag: 'revoked' });
  });

  it('counts every kind, 0 when absent', () => {
    assert.deepEqual(countKinds(['spam', 'spam', 'good']), { good: 1, spam: 2, abuse: 0, fraud: 0, policy: 0, scraping: 0 });
  });

  describe('properties', () => {
    const input = fc.record({
      ageDays: fc.integer({ min: 0, max: 5000 }),
      flaggedSuspicious: fc.boolean(),
      latestPerSite: fc.array(kindArb, { maxLength: 40 }),
    });

    it('the score is an integer in 0..100', () => {
      fc.assert(fc.property(input, (i) => {
        const { score } = reputationScore({ ...i, revoked: false });
        return Number.isInteger(score) && score >= 0 && score <= 100;
      }), { numRuns: 2000 });
    });

    it('adding, replacing or removing one site\'s report moves the score by at most 12', () => {
      const change = fc.oneof(
        fc.record({ op: fc.constant('add' as const), kind: kindArb, at: fc.nat() }),
        fc.record({ op: fc.constant('replace' as const), kind: kindArb, at: fc.nat() }),
        fc.record({ op: fc.constant('remove' as const), kind: kindArb, at: fc.nat() }),
      );
      fc.assert(fc.property(input, change, (i, c) => {
        const before = reputationScore({ ...i, revoked: false }).score;
        const sites = [...i.latestPerSite];
        if (c.op === 'add') sites.splice(c.at % (sites.length + 1), 0, c.kind);
        else if (sites.length > 0 && c.op === 'replace') sites[c.at % sites.length] = c.kind;
        else if (sites.length > 0) sites.splice(c.at % sites.length, 1);
        const after = reputationScore({ ...i, latestPerSite: sites, revoked: false }).score;
        return Math.abs(after - before) <= 12;
      }), { numRuns: 3000 });
    });

    it('one site alone never takes a fresh agent below 40 or above 52', () => {
      fc.assert(fc.property(fc.integer({ min: 0, max: 29 }), kindArb, (ageDays, kind) => {
        const { score } = reputationScore({ ageDays, revoked: false, flaggedSuspicious: false, latestPerSite: [kind] });
        return score >= 40 && score <= 52;
      }));
    });

    it('a revoked agent always scores 0 with flag revoked', () => {
      fc.assert(fc.property(input, (i) => {
        const r = reputationScore({ ...i, revoked: true });
        return r.score === 0 && r.flag === 'revoked';
      }), { numRuns: 500 });
    });

    it('a low score confirmed by 3 or more sites is never ok', () => {
      fc.assert(fc.property(input, (i) => {
        const r = reputationScore({ ...i, revoked: false });
        return !(r.score < 30 && i.latestPerSite.length >= 3) || r.flag === 'suspicious';
      }), { numRuns: 2000 });
    });
  });
});

interface ReputationBody {
  agent_id: string;
  score: number;
  flag: string;
  age_days: number;
  reports: Record<string, number>;
  reporting_sites: number;
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`reputation and reports endpoints (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend });
    });
    after(() => t.close());

    const reputation = async (id: string) => json<ReputationBody>(await t.app.inject({ url: `/api/v1/agents/${id}/reputation` }));
    const report = (access_token: string, kind: string, detail?: string) =>
      t.app.inject({ method: 'POST', url: '/api/v1/reports', payload: detail === undefined ? { access_token, kind } : { access_token, kind, detail } });

    it('a fresh agent scores 50 with every kind at 0; age_days follows the clock; unknown agent 404', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      assert.deepEqual(await reputation(agent.id), {
        agent_id: agent.id,
        score: 50,
        flag: 'ok',
        age_days: 0,
        reports: { good: 0, spam: 0, abuse: 0, fraud: 0, policy: 0, scraping: 0 },
        reporting_sites: 0,
      });
      t.clock.advance(30 * DAY - 1);
      assert.deepEqual([(await reputation(agent.id)).age_days, (await reputation(agent.id)).score], [29, 50]);
      t.clock.advance(1);
      assert.deepEqual([(await reputation(agent.id)).age_days, (await reputation(agent.id)).score], [30, 51]);
      t.clock.advance(400 * DAY);
      assert.deepEqual([(await reputation(agent.id)).age_days, (await reputation(agent.id)).score], [430, 60]);
      for (const id of ['ag_aaaaaaaaaaaaaaaaaaaaaaaaaa', 'bogus']) {
        assert.equal((await t.app.inject({ url: `/api/v1/agents/${id}/reputation` })).statusCode, 404);
      }
    });

    it('accepts a report with a pass the agent presented; the site is the pass\'s aud', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const res = await report(await mintPass(t, agent, 'shop.example'), 'spam', 'sent 40 messages in a minute');
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(json(res), { ok: true, agent_id: agent.id, site: 'shop.example', kind: 'spam', counted: true });
      const rep = await reputation(agent.id);
      assert.equal(rep.score, 45);
      assert.equal(rep.reporting_sites, 1);
      assert.equal(rep.reports.spam, 1);
      const [stored] = await t.services.store.reports.listForAgent(agent.id);
      assert.equal(stored?.detail, 'sent 40 messages in a minute');
      const activity = json<{ items: { action: string; agent_id: string; site: string; detail: Record<string, unknown> }[] }>(
        await t.app.inject({ url: '/api/activity?action=report.received', headers: owner.auth }),
      );
      assert.deepEqual(activity.items.map((i) => [i.agent_id, i.site, i.detail.kind]), [[agent.id, 'shop.example', 'spam']]);
    });

    it('counts only the latest report of each site', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const pass = await mintPass(t, agent, 'shop.example');
      for (const kind of ['good', 'good', 'fraud', 'abuse', 'spam', 'fraud']) assert.equal((await report(pass, kind)).statusCode, 200);
      let rep = await reputation(agent.id);
      assert.deepEqual([rep.score, rep.reporting_sites, rep.reports.good, rep.reports.fraud], [40, 1, 0, 1]);
      for (const site of ['a.example', 'b.example', 'c.example']) assert.equal((await report(await mintPass(t, agent, site), 'fraud')).statusCode, 200);
      rep = await reputation(agent.id);
      assert.deepEqual([rep.score, rep.flag, rep.reporting_sites, rep.reports.fraud, rep.reports.good], [10, 'suspicious', 4, 4, 0]);
    });

    it('a `good` report does not replace a negative one of the same site (counted: false); another negative one does', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const pass = await mintPass(t, agent, 'shop.example');
      for (const kind of ['spam', 'abuse', 'fraud', 'policy', 'scraping']) {
        assert.deepEqual(json(await report(pass, kind, 'bad')), { ok: true, agent_id: agent.id, site: 'shop.example', kind, counted: true });
        // The agent holds passes for the site, so it could send this in the site's name.
        const washed = await report(pass, 'good', 'all fine');
        assert.equal(washed.statusCode, 200);
        assert.deepEqual(json(washed), { ok: true, agent_id: agent.id, site: 'shop.example', kind: 'good', counted: false });
        const [stored] = await t.services.store.reports.listForAgent(agent.id);
        assert.deepEqual([stored?.kind, stored?.detail], [kind, 'bad']);
      }
      assert.deepEqual([(await reputation(agent.id)).score, (await reputation(agent.id)).reports.scraping], [47, 1]);
      const activity = json<{ items: { detail: Record<string, unknown> }[] }>(
        await t.app.inject({ url: '/api/activity?action=report.received&limit=1', headers: owner.auth }),
      );
      assert.deepEqual(activity.items[0]?.detail, { kind: 'good', detail: 'all fine', counted: false });
    });

    it('a revoked or removed agent scores 0 with flag revoked; reports about it are still taken', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const pass = await mintPass(t, agent, 'shop.example');
      await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: 'suspicious' } });
      assert.deepEqual([(await reputation(agent.id)).score, (await reputation(agent.id)).flag], [50, 'suspicious']);
      await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: 'revoked' } });
      assert.deepEqual([(await reputation(agent.id)).score, (await reputation(agent.id)).flag], [0, 'revoked']);
      await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: 'ok' } });
      assert.equal((await reputation(agent.id)).score, 50);
      await t.app.inject({ method: 'DELETE', url: `/api/agents/${agent.id}`, headers: owner.auth });
      assert.equal((await report(pass, 'good')).statusCode, 200);
      assert.deepEqual([(await reputation(agent.id)).score, (await reputation(agent.id)).flag, (await reputation(agent.id)).reporting_sites], [0, 'revoked', 1]);
    });

    it('takes a pass minted exactly 7 days ago (expired), refuses one minted 7 days and 1 s ago', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const pass = await mintPass(t, agent, 'shop.example');
      t.clock.advance(7 * DAY);
      assert.equal((await report(pass, 'good')).statusCode, 200);
      t.clock.advance(1000);
      const res = await report(pass, 'good');
      assert.equal(res.statusCode, 400);
      assert.match(json<{ detail: string }>(res).detail, /7 days/);
    });

    it('refuses forged, foreign, other-typ and malformed tokens with 400', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const kid = (json<{ keys: { kid: string }[] }>(await t.app.inject({ url: '/api/v1/jwks' })).keys[0] as { kid: string }).kid;
      const now = seconds(t.clock.now());
      const good = await mintPass(t, agent, 'shop.example');
      const claims = JSON.parse(Buffer.from(good.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;
      const { privateKey } = await generateKeyPair('ES256');
      const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid }).sign(privateKey);
      const unknownKid = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'not-ours' }).sign(privateKey);
      const [h, , sig] = good.split('.');
      const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, aud: 'evil.example' })).toString('base64url')}.${sig}`;
      const cases: Record<string, string> = {
        forged,
        unknownKid,
        tampered,
        stepupTyp: await mintPass(t, agent, 'shop.example', {}, STEPUP_TYP),
        revocationTyp: await mintPass(t, agent, 'shop.example', {}, REVOCATION_TYP),
        wrongType: await mintPass(t, agent, 'shop.example', { type: 'stepup' as 'access' }),
        foreignIssuer: await mintPass(t, agent, 'shop.example', { iss: 'https://other-service.example' }),
        noSub: await mintPass(t, agent, 'shop.example', { sub: '' }),
        futureIat: await mintPass(t, agent, 'shop.example', { iat: now + 3600 }),
        garbage: 'not.a.jwt',
        one: 'x',
      };
      for (const [name, token] of Object.entries(cases)) {
        const res = await report(token, 'fraud');
        assert.equal(res.statusCode, 400, `${name}: ${res.statusCode} ${res.body}`);
        assert.match(json<{ detail: string }>(res).detail, /^invalid access_token: /, name);
      }
      assert.equal((await reputation(agent.id)).reporting_sites, 0);
    });

    it('refuses malformed bodies with 422', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const pass = await mintPass(t, agent, 'shop.example');
      for (const payload of [{ access_token: pass }, { access_token: pass, kind: 'rude' }, { kind: 'spam' }, { access_token: pass, kind: 'spam', detail: 'x'.repeat(2001) }, { access_token: '', kind: 'spam' }]) {
        assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/reports', payload })).statusCode, 422, JSON.stringify(payload).slice(0, 80));
      }
      assert.equal((await report(pass, 'spam', 'x'.repeat(2000))).statusCode, 200);
    });

    it('limits reports to 30 per site per minute', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      t.clock.set(Math.ceil(t.clock.now() / 60_000) * 60_000);
      const pass = await mintPass(t, agent, 'busy.example');
      for (let i = 0; i < 30; i++) assert.equal((await report(pass, 'good')).statusCode, 200);
      const limited = await report(pass, 'good');
      assert.equal(limited.statusCode, 429);
      assert.ok(Number(limited.headers['retry-after']) > 0);
      assert.equal((await report(await mintPass(t, agent, 'calm.example'), 'good')).statusCode, 200);
      t.clock.advance(60_000);
      assert.equal((await report(pass, 'good')).statusCode, 200);
    });
  });
}
