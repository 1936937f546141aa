import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { FakeService, tokenAnswer, type Reply } from './helpers/fake-service.ts';
import { structured, text, type McpSession } from './helpers/mcp-host.ts';
import { inProcessSession } from './helpers/mcp-in-process.ts';
import { McpTestSite } from './helpers/mcp-site.ts';

// Requests nobody answers in time: a real service reads them `expired` only after 5 minutes, so the
// MCP server runs in this process against the service's scripted stand-in (the SDK Client as the
// host, a real site over HTTP). An expired access request, an expired step-up and the mandate_wait
// of an expired request are tool errors carrying the detail and the next step, never protocol errors.

const created = (txnId: string): Reply => ({ status: 200, body: { txn_id: txnId, expires_in: 300 } });
const poll = (status: string, kind: string, extra: Record<string, unknown> = {}): Reply => ({ status: 200, body: { status, kind, agent: 'Bot', site: 'shop.test', scopes: ['list'], user_info: [], ...extra } });

function assertExpired(r: CallToolResult, txnId: string): void {
  assert.equal(r.isError, true, text(r));
  assert.equal(structured(r)['error'], 'approval_expired');
  assert.equal(structured(r)['txn_id'], txnId);
  assert.match(structured(r)['detail'], /nobody answered the request in time/);
  assert.match(structured(r)['next_step'], /ask again later|mandate_notify_owner/);
  assert.match(text(r), /^Error \(approval_expired\): .*\nNext step: /);
}

describe('mandate-agent mcp: requests that expire', () => {
  const service = new FakeService();
  let site: McpTestSite;
  let s: McpSession;
  /** Holds the first poll of t_late until the test lets it through, so the call answers `pending` first. */
  let releaseLatePoll!: () => void;
  const latePoll = new Promise<void>((resolve) => (releaseLatePoll = resolve));

  before(async () => {
    site = await McpTestSite.start();
    s = await inProcessSession(async (input, init) => {
      if (new URL(String(input)).pathname === '/api/v1/authz-requests/t_late') await latePoll;
      return service.fetch(input, init);
    });
  });

  after(async () => {
    releaseLatePoll();
    await s?.close();
    await site?.stop();
  });

  it('an access request nobody answers: mandate_request_access answers a tool error', async () => {
    service.on('POST /api/v1/authz-requests', created('t_access')).on('GET /api/v1/authz-requests/t_access', poll('pending', 'initial'), poll('expired', 'initial'));
    const r = await s.call('mandate_request_access', { site: 'shop.test', scopes: ['list'] });
    assertExpired(r, 't_access');
    assert.equal(service.callsTo('POST /api/v1/token').length, 0, 'no pass asked for');
  });

  it('a step-up nobody answers: mandate_fetch answers a tool error, and the site is not called again', async () => {
    service.on('POST /api/v1/token', tokenAnswer(1)).on('POST /api/v1/stepup', created('t_stepup')).on('GET /api/v1/authz-requests/t_stepup', poll('expired', 'stepup', { action: 'POST /stepup' }));
    const r = await s.call('mandate_fetch', { url: `${site.url}/stepup`, site: 'shop.test', method: 'POST', body: 'go' });
    assertExpired(r, 't_stepup');
    assert.equal(service.callsTo('POST /api/v1/stepup')[0]?.body?.['action'], 'POST /stepup');
    assert.deepEqual(site.stepupTokens, []);
  });

  it('mandate_wait of a request that expired after the call answered pending: a tool error', async () => {
    service.on('POST /api/v1/agent-approval', { status: 200, body: { txn_id: 't_late', expires_in: 300, status: 'pending' } }).on('GET /api/v1/authz-requests/t_late', poll('expired', 'agent_approval'));
    const first = await s.call('mandate_request_approval', { site: 'shop.test', action: 'checkout:submit', wait_seconds: 0.2 });
    assert.equal(first.isError, undefined, text(first));
    assert.deepEqual(structured(first), { status: 'pending', txn_id: 't_late' });
    releaseLatePoll();
    assertExpired(await s.call('mandate_wait', { txn_id: 't_late' }), 't_late');
  });

  it('mandate_wait of an expired request this process did not file: a tool error', async () => {
    service.on('GET /api/v1/authz-requests/t_other', poll('expired', 'initial'));
    assertExpired(await s.call('mandate_wait', { txn_id: 't_other' }), 't_other');
  });

  it('the server keeps answering', async () => {
    service.on('GET /api/v1/agent-status', { status: 200, body: { agent_id: 'ag_in_process', global_flag: 'ok', revoked_sites: [], jwks_url: 'http://mandate.test/jwks' } });
    const r = await s.call('mandate_status');
    assert.equal(r.isError, undefined, text(r));
    assert.equal(structured(r)['flag'], 'ok');
  });
});
