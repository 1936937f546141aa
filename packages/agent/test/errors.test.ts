import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { AgentRevokedError, ApprovalError, InvalidInputError, KeyFileError, MandateError, ServiceUnreachableError } from '../src/client/errors.ts';
import { ServiceClient, detailText, errorFromAnswer, normalizeServiceUrl } from '../src/client/http.ts';
import { EXIT, Interrupted, SiteUnreachableError, UsageError, exitCodeFor } from '../src/cli/exit-codes.ts';
import { FakeClock } from './helpers/fake-clock.ts';
import { FakeService } from './helpers/fake-service.ts';

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('error answers become typed errors', () => {
  it('keeps detail and next_step as the service wrote them', () => {
    const e = errorFromAnswer(409, { detail: 'access already approved', next_step: 'get a pass with POST /api/v1/token' }, null, 'POST', '/api/v1/authz-requests');
    assert.ok(e instanceof MandateError);
    assert.equal(e.code, 'service_error');
    assert.equal(e.status, 409);
    assert.equal(e.detail, 'access already approved');
    assert.equal(e.nextStep, 'get a pass with POST /api/v1/token');
    assert.equal(e.message, 'POST /api/v1/authz-requests: 409 access already approved (next step: get a pass with POST /api/v1/token)');
    assert.deepEqual(e.toJSON(), { code: 'service_error', status: 409, detail: 'access already approved', next_step: 'get a pass with POST /api/v1/token' });
  });

  it('maps a revoked agent to AgentRevokedError', () => {
    const e = errorFromAnswer(403, { detail: 'agent revoked by its owner', next_step: 'stop' }, null, 'GET', '/api/v1/agent-status');
    assert.ok(e instanceof AgentRevokedError);
    assert.equal(e.code, 'agent_revoked');
    assert.ok(!(errorFromAnswer(403, { detail: 'no approved access for this site' }, null, 'POST', '/x') instanceof AgentRevokedError));
  });

  it('flattens a 422 list and survives bodies without a detail', () => {
    assert.equal(detailText({ detail: [{ loc: ['body', 'text'], msg: 'must NOT have fewer than 1 characters', type: 'too_short' }] }, 422), 'body.text: must NOT have fewer than 1 characters');
    assert.equal(detailText({}, 502), 'HTTP 502 without a detail');
    assert.equal(detailText(null, 500), 'HTTP 500 without a detail');
  });

  it('reads Retry-After from the header, else from the body', () => {
    assert.equal(errorFromAnswer(429, { detail: 'rate limit exceeded', retry_after: 7 }, '3', 'POST', '/x').retryAfter, 3);
    assert.equal(errorFromAnswer(429, { detail: 'rate limit exceeded', retry_after: 7 }, null, 'POST', '/x').retryAfter, 7);
  });

  it('normalises the service URL and refuses what is not one', () => {
    assert.equal(normalizeServiceUrl('HTTP://Mandate.Example:443/'), 'http://mandate.example:443');
    assert.equal(normalizeServiceUrl('https://mandate.example/base//'), 'https://mandate.example/base');
    assert.throws(() => normalizeServiceUrl('mandate.example'), TypeError);
    assert.throws(() => normalizeServiceUrl('ftp://mandate.example'), TypeError);
    assert.throws(() => normalizeServiceUrl('https://user:pw@mandate.example'), TypeError);
  });
});

describe('service client', () => {
  it('reports an unreachable service as ServiceUnreachableError', async () => {
    const client = new ServiceClient({ serviceUrl: `http://127.0.0.1:${await closedPort()}` });
    await assert.rejects(client.call('GET', '/api/healthz'), (e: unknown) => e instanceof ServiceUnreachableError && e.code === 'unreachable' && e.status === 0 && /ECONNREFUSED/.test(e.detail));
  });

  it('waits out a 429 as Retry-After says, then goes on', async () => {
    const service = new FakeService().on('GET /x', { status: 429, body: { detail: 'rate limit exceeded', retry_after: 2 }, headers: { 'retry-after': '2' } }, { status: 200, body: { ok: true } });
    const clock = new FakeClock();
    const client = new ServiceClient({ serviceUrl: 'http://mandate.test', fetch: service.fetch, clock });
    assert.deepEqual(await client.call('GET', '/x'), { ok: true });
    assert.deepEqual(clock.sleeps, [2000]);
  });

  it('reports a 429 that goes on, or asks for a long wait, with its retry_after', async () => {
    const limited = { status: 429, body: { detail: 'rate limit exceeded', retry_after: 1 }, headers: { 'retry-after': '1' } };
    const service = new FakeService().on('GET /x', limited, limited, limited);
    const client = new ServiceClient({ serviceUrl: 'http://mandate.test', fetch: service.fetch, clock: new FakeClock(), maxRateLimitRetries: 2 });
    await assert.rejects(client.call('GET', '/x'), (e: unknown) => e instanceof MandateError && e.status === 429 && e.retryAfter === 1);

    const long = new FakeService().on('GET /x', { status: 429, body: { detail: 'rate limit exceeded' }, headers: { 'retry-after': '300' } });
    const clock = new FakeClock();
    await assert.rejects(new ServiceClient({ serviceUrl: 'http://mandate.test', fetch: long.fetch, clock }).call('GET', '/x'), (e: unknown) => e instanceof MandateError && e.retryAfter === 300);
    assert.deepEqual(clock.sleeps, []);
  });

  it('keeps the start of a non-JSON error page, and refuses a non-JSON success', async () => {
    const html = async () => new Response('<html>Bad gateway</html>', { status: 502 });
    await assert.rejects(new ServiceClient({ serviceUrl: 'http://m.test', fetch: html }).call('GET', '/x'), (e: unknown) => e instanceof MandateError && e.status === 502 && /Bad gateway/.test(e.detail));
    const portal = async () => new Response('<html>Sign in to the Wi-Fi</html>', { status: 200 });
    await assert.rejects(new ServiceClient({ serviceUrl: 'http://m.test', fetch: portal }).call('GET', '/x'), /not JSON/);
  });

  it('passes the caller\'s abort through as the abort, not as a network error', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    controller.abort(reason);
    const client = new ServiceClient({ serviceUrl: 'http://m.test', fetch: (_i, init) => Promise.reject(init?.signal?.reason) });
    await assert.rejects(client.call('GET', '/x', { signal: controller.signal }), (e: unknown) => e === reason);
  });
});

describe('CLI exit codes', () => {
  it('maps each kind of failure to its documented code', () => {
    const http = (status: number) => errorFromAnswer(status, { detail: 'x' }, null, 'GET', '/x');
    assert.equal(exitCodeFor(new UsageError('bad flag')), EXIT.usage);
    assert.equal(exitCodeFor(new InvalidInputError('bad scope')), EXIT.usage);
    assert.equal(exitCodeFor(new KeyFileError('open to others')), EXIT.usage);
    assert.equal(exitCodeFor(http(400)), EXIT.refused);
    assert.equal(exitCodeFor(http(409)), EXIT.refused);
    assert.equal(exitCodeFor(http(429)), EXIT.refused);
    assert.equal(exitCodeFor(errorFromAnswer(403, { detail: 'agent revoked by its owner' }, null, 'GET', '/x')), EXIT.refused);
    assert.equal(exitCodeFor(new ApprovalError('t_1', 'denied', 'no')), EXIT.refused);
    assert.equal(exitCodeFor(new ApprovalError('t_1', 'expired', 'late')), EXIT.refused);
    assert.equal(exitCodeFor(http(503)), EXIT.unreachable);
    assert.equal(exitCodeFor(new ServiceUnreachableError({ detail: 'ECONNREFUSED' })), EXIT.unreachable);
    assert.equal(exitCodeFor(new SiteUnreachableError('http://site', new Error('x'))), EXIT.unreachable);
    assert.equal(exitCodeFor(new Interrupted()), EXIT.interrupted);
  });
});
