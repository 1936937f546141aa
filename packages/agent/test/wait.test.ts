import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { waitForAnswer, type WaitProgress } from '../src/approvals/wait.ts';
import { ApprovalError, MandateError } from '../src/client/errors.ts';
import { ServiceClient } from '../src/client/http.ts';
import { formatRemaining, progressLine, ProgressReporter } from '../src/cli/progress.ts';
import { FakeClock } from './helpers/fake-clock.ts';
import { FakeService, type Reply } from './helpers/fake-service.ts';

const ROUTE = 'GET /api/v1/authz-requests/t_abc';
const poll = (status: string, extra: Record<string, unknown> = {}): Reply => ({ status: 200, body: { status, kind: 'initial', agent: 'Bot', site: 'shop.example', scopes: ['list'], user_info: [], ...extra } });

function setup(...replies: Reply[]) {
  const service = new FakeService().on(ROUTE, ...replies);
  const clock = new FakeClock();
  const client = new ServiceClient({ serviceUrl: 'http://mandate.test', fetch: service.fetch, clock });
  return { service, clock, deps: { client, clock, agentJwt: async () => 'agent-jwt' } };
}

describe('waiting for the owner', () => {
  it('polls until approved, sending X-Agent-JWT, and reports each poll with the time left', async () => {
    const { service, clock, deps } = setup(poll('pending'), poll('pending'), poll('approved'));
    const seen: WaitProgress[] = [];
    const answer = await waitForAnswer(deps, 't_abc', { onProgress: (p) => seen.push(p), expiresAt: clock.now() + 300_000 });
    assert.equal(answer.status, 'approved');
    assert.deepEqual(seen.map((p) => [p.status, p.changed, p.remainingMs]), [['pending', true, 300_000], ['pending', false, 298_000], ['approved', true, 296_000]]);
    assert.deepEqual(clock.sleeps, [2000, 2000]);
    assert.ok(service.calls.every((c) => c.headers['x-agent-jwt'] === 'agent-jwt'));
  });

  for (const [status, outcome] of [['denied', 'denied'], ['expired', 'expired'], ['consumed', 'consumed']] as const) {
    it(`rejects with ApprovalError (${outcome}) when the request reads ${status}`, async () => {
      const { deps } = setup(poll('pending'), poll(status));
      await assert.rejects(waitForAnswer(deps, 't_abc'), (e: unknown) => e instanceof ApprovalError && e.outcome === outcome && e.txnId === 't_abc' && e.code === `approval_${outcome}`);
    });
  }

  it('rejects an approved step-up whose token was not delivered, with the service\'s reason', async () => {
    const { deps } = setup(poll('approved', { kind: 'stepup', stepup_token_error: 'no approved access to this site any more' }));
    await assert.rejects(waitForAnswer(deps, 't_abc'), (e: unknown) => e instanceof ApprovalError && e.outcome === 'undelivered' && /no approved access/.test(e.detail));
  });

  it('hands back the step-up token of an approved step-up', async () => {
    const { deps } = setup(poll('approved', { kind: 'stepup', action: 'pay', stepup_token: 'st.jwt' }));
    assert.equal((await waitForAnswer(deps, 't_abc')).stepup_token, 'st.jwt');
  });

  it('stops when the caller\'s timeout is reached and says the request is still open', async () => {
    const { clock, deps } = setup(...Array.from({ length: 10 }, () => poll('pending')));
    await assert.rejects(waitForAnswer(deps, 't_abc', { timeoutMs: 5_000, intervalMs: 1_000 }), (e: unknown) => e instanceof ApprovalError && e.outcome === 'timeout' && /still open/.test(e.detail));
    assert.ok(clock.sleeps.length <= 5);
  });

  it('gives up some time after the request\'s expiry if the service still says pending', async () => {
    const { deps, clock } = setup(...Array.from({ length: 400 }, () => poll('pending')));
    await assert.rejects(waitForAnswer(deps, 't_abc', { expiresAt: clock.now() + 10_000, intervalMs: 1_000 }), (e: unknown) => e instanceof ApprovalError && e.outcome === 'timeout' && /in time/.test(e.detail));
  });

  it('rides out a service that stops answering for a while', async () => {
    const { deps } = setup(poll('pending'), new TypeError('fetch failed'), { status: 503, body: { detail: 'service unavailable' } }, poll('approved'));
    const seen: string[] = [];
    const answer = await waitForAnswer(deps, 't_abc', { onProgress: (p) => seen.push(p.status) });
    assert.equal(answer.status, 'approved');
    assert.deepEqual(seen, ['pending', 'unreachable', 'unreachable', 'approved']);
  });

  it('does not ride out other errors (an unknown request)', async () => {
    const { deps } = setup({ status: 404, body: { detail: 'request not found' } });
    await assert.rejects(waitForAnswer(deps, 't_abc'), (e: unknown) => e instanceof MandateError && e.status === 404);
  });

  it('stops at once when aborted', async () => {
    const { deps } = setup(poll('pending'), poll('pending'));
    const controller = new AbortController();
    const reason = new Error('ctrl-c');
    await assert.rejects(waitForAnswer(deps, 't_abc', { signal: controller.signal, onProgress: () => controller.abort(reason) }), (e: unknown) => e === reason);
  });
});

describe('progress display', () => {
  it('formats the time left as m:ss', () => {
    assert.equal(formatRemaining(271_000), '4:31');
    assert.equal(formatRemaining(300_000), '5:00');
    assert.equal(formatRemaining(500), '0:01');
    assert.equal(formatRemaining(-5), '0:00');
  });

  it('writes a line per change (and a reminder every 30 s) when not on a terminal', () => {
    const written: string[] = [];
    let now = 0;
    const stream = { isTTY: false, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream;
    const r = new ProgressReporter(stream, 'access to shop.example', () => now);
    const p = (status: WaitProgress['status'], changed: boolean, remainingMs: number): WaitProgress => ({ txnId: 't', status, changed, remainingMs });
    r.report(p('pending', true, 300_000));
    now = 2_000;
    r.report(p('pending', false, 298_000));
    now = 31_000;
    r.report(p('pending', false, 269_000));
    r.report(p('approved', true, 269_000));
    assert.deepEqual(written, [
      'Waiting for the owner to approve access to shop.example on their phone… 5:00 left\n',
      'Waiting for the owner to approve access to shop.example on their phone… 4:29 left\n',
      'The owner\'s answer: approved\n',
    ]);
    assert.equal(progressLine(p('unreachable', true, 60_000), 'x'), 'Cannot reach the service; still trying… 1:00 left');
  });
});
