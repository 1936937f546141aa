import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeService, tokenAnswer } from './helpers/fake-service.ts';
import { structured, text, type McpSession } from './helpers/mcp-host.ts';
import { inProcessSession } from './helpers/mcp-in-process.ts';
import { McpTestSite } from './helpers/mcp-site.ts';

// The cut of a site call, with the limit set short (siteTimeoutMs 500), so the cut path is tested on
// its own, apart from the 30 s default the flow test waits for: a site that sends its headers and
// then nothing is cut, the tool answers an error, and the server goes on answering.

const LIMIT_MS = 500;

describe('mandate-agent mcp: a site call cut at its limit', () => {
  const service = new FakeService().on('POST /api/v1/token', tokenAnswer(1));
  let site: McpTestSite;
  let s: McpSession;

  before(async () => {
    site = await McpTestSite.start();
    s = await inProcessSession(service.fetch, { siteTimeoutMs: LIMIT_MS });
  });

  after(async () => {
    await s?.close();
    await site?.stop();
  });

  it('a site that never finishes its answer is cut after the limit: a tool error saying so', async () => {
    const started = Date.now();
    const r = await s.call('mandate_fetch', { url: `${site.url}/hang`, site: 'shop.test' });
    const ms = Date.now() - started;
    assert.equal(r.isError, true, text(r));
    assert.equal(structured(r)['error'], 'site_timeout');
    assert.match(structured(r)['detail'], new RegExp(`GET ${site.url}/hang got no complete answer within ${LIMIT_MS} ms`));
    assert.ok(structured(r)['next_step']);
    assert.ok(ms >= LIMIT_MS - 50 && ms < 5_000, `${ms} ms`);
    assert.equal(site.hanging.size, 1, 'the site did receive the call');
  });

  it('the next call goes through (the server keeps answering, the pass is reused)', async () => {
    const r = await s.call('mandate_fetch', { url: `${site.url}/echo`, site: 'shop.test' });
    assert.equal(r.isError, undefined, text(r));
    assert.equal(structured(r)['status'], 200);
    assert.equal(service.callsTo('POST /api/v1/token').length, 1);
  });
});
