import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FixedClock } from '../../server/src/clock.ts';
import { freePort } from '../../server/test/helpers/server-process.ts';
import { type ReportKind, accessTokenOf, createVerifier, type Verifier } from '../src/index.ts';
import { type Mandate, PUBLIC_BASE, SITE, agentRequest, agentWithPass, quiet, startMandate } from './helpers/mandate.ts';

// report(): POST /api/v1/reports with a pass the agent presented, as a typed result that never throws.

describe('reports', () => {
  let m: Mandate;
  let v: Verifier;
  before(async () => {
    m = await startMandate({ clock: new FixedClock(Date.UTC(2026, 10, 22, 12)) });
    v = createVerifier({ mode: 'cloud', serviceUrl: m.url, site: SITE, publicBaseUrl: PUBLIC_BASE, onError: quiet });
  });
  after(() => m.close());

  it('reports with the pass of a request the agent made; Mandate counts it', async () => {
    const a = await agentWithPass(m);
    const req = await agentRequest(m, a);
    assert.equal((await v.verify(req)).ok, true);
    const pass = accessTokenOf(req.headers) ?? '';
    assert.deepEqual(await v.report(pass, 'scraping', 'fetched 40,000 listings in 5 minutes'), { ok: true, agentId: a.agent.id, site: SITE, kind: 'scraping', counted: true });
    assert.deepEqual(await v.report(pass, 'good'), { ok: true, agentId: a.agent.id, site: SITE, kind: 'good', counted: false }, 'a good report does not erase a negative one');
    const reputation = (await m.app.inject({ method: 'GET', url: `/api/v1/agents/${a.agent.id}/reputation` })).json();
    assert.equal(reputation.reports.scraping, 1);
  });

  it('refusals are typed results with Mandate\'s reason', async () => {
    const a = await agentWithPass(m);
    const forged = await v.report(`${a.pass.slice(0, -4)}AAAA`, 'spam');
    assert.equal(forged.ok, false);
    assert.equal(!forged.ok && forged.error, 'invalid_report');
    assert.match(!forged.ok ? forged.description : '', /invalid access_token/);
    assert.deepEqual(await v.report(a.pass, 'rude' as ReportKind), { ok: false, status: 400, error: 'invalid_report', description: 'kind must be one of good, spam, abuse, fraud, policy, scraping' });
    assert.equal((await v.report(a.pass, 'spam', 'x'.repeat(2001))).ok, false);
    assert.equal((await v.report('', 'spam')).ok, false);
  });

  it('rate limited: 429 with the wait; Mandate unreachable: 503', async () => {
    const site = 'reports.example';
    const passes = await Promise.all(Array.from({ length: 31 }, () => agentWithPass(m, { site }).then((a) => a.pass)));
    const results = [];
    for (const pass of passes) results.push(await v.report(pass, 'good'));
    const last = results.at(-1);
    assert.ok(results.slice(0, 30).every((r) => r.ok));
    assert.equal(last?.ok, false);
    assert.equal(!last?.ok && last?.error, 'rate_limited');
    assert.equal(!last?.ok && typeof last?.retryAfterSec, 'number');

    const down = createVerifier({ mode: 'cloud', serviceUrl: `http://127.0.0.1:${await freePort()}`, site: SITE, onError: quiet });
    const r = await down.report(passes[0] ?? '', 'spam');
    assert.deepEqual([r.ok, !r.ok && r.status, !r.ok && r.error], [false, 503, 'service_unavailable']);
  });
});
