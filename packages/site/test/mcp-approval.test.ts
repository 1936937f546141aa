import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { detailsDigestOf, isDetailsSummary } from '@mandate/protocol';
import { CALL_AGAIN, defaultSummary } from '../src/index.ts';
import { type App, type StandIn, newApp, passFetch, passFor, startStandIn } from './helpers/mcp-stand-in.ts';
import { type McpApp, TOOLS, connectClient, startMcpApp } from './helpers/mcp-servers.ts';
import { quiet } from './helpers/mandate.ts';

// withApproval: the owner approves a tool call on their phone, inside the call. Against the
// stand-in's site step-up (file, long poll, use up): pending -> "call again" -> approved -> runs
// once; denied; other arguments ask anew; an approval during the wait runs the tool in that call.
// node:http and Express (the wrapper lives in the tool handler, so the framework only carries req.auth).

const textOf = (r: unknown): string => ((r as CallToolResult).content[0] as { text: string }).text;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const framework of ['node', 'express'] as const) {
  describe(`withApproval, ${framework}`, () => {
    let s: StandIn;
    let app: McpApp;
    let notesApp: App;
    let client: Client;

    /** Calls a tool as the client does, collecting its progress notifications. */
    async function call(name: string, args: Record<string, unknown>): Promise<{ result: CallToolResult; progress: Progress[] }> {
      const progress: Progress[] = [];
      const result = (await client.callTool({ name, arguments: args }, undefined, { onprogress: (p) => progress.push(p), timeout: 20_000 })) as CallToolResult;
      return { result, progress };
    }

    /** Approves (or denies) the newest filed request as soon as it is filed. */
    async function answerWhenFiled(count: number, status: 'approved' | 'denied', afterMs = 300): Promise<void> {
      while (s.stepups.length < count) await sleep(20);
      await sleep(afterMs);
      const record = s.stepups[count - 1];
      assert.ok(record !== undefined);
      await s.answer(record.txn, status);
    }

    before(async () => {
      s = await startStandIn();
      notesApp = await newApp();
      app = await startMcpApp(framework, (resource) => ({
        service: s.url,
        resource,
        scopes: ['notes:read'],
        tools: TOOLS,
        mode: 'local',
        approvalWaitSec: 2,
        approvalPollSec: 1,
        onError: quiet,
      }));
      await app.mandate.start();
      const pass = await passFor(s, notesApp, { resource: app.resource, scopes: ['notes:read', 'notes:write'], bound: true });
      client = await connectClient(app, passFetch(pass, { bound: true, signer: notesApp }));
    });
    after(async () => {
      await client.close();
      app.mandate.close();
      await app.close();
      await s.close();
    });

    it('pending: files one step-up for the tool and its arguments, sends progress, then says to call again', async () => {
      const { result, progress } = await call('delete_note', { id: '7' });
      assert.equal(result.isError, true);
      assert.equal(textOf(result), CALL_AGAIN);
      assert.ok(progress.length >= 2, `progress notifications: ${progress.length}`);
      assert.ok(progress.every((p, i) => i === 0 || p.progress > (progress[i - 1]?.progress ?? 0)), 'progress increases');
      assert.equal(s.stepups.length, 1);
      const filed = s.stepups[0];
      assert.equal(filed?.action, 'delete_note');
      assert.deepEqual(filed?.details, { summary: 'Delete the note 7', digest: detailsDigestOf({ id: '7' }) });
      assert.deepEqual(app.ran, []);
      assert.equal(app.mandate.status().pendingApprovals, 1);
    });

    it('approved: the identical call continues the same request, uses the approval up at Mandate, and runs once', async () => {
      const filed = s.stepups[0];
      assert.ok(filed !== undefined);
      await s.answer(filed.txn, 'approved');
      const { result } = await call('delete_note', { id: '7' });
      assert.equal(result.isError, undefined);
      assert.equal(textOf(result), 'deleted 7');
      assert.equal(s.stepups.length, 1, 'no second card');
      assert.deepEqual(app.ran, [{ id: '7' }]);
      const used = s.calls.filter((c) => c.path === '/api/v1/stepup/verify');
      assert.equal(used.length, 1);
      assert.deepEqual({ ...(used[0]?.body as object), stepup_token: undefined }, {
        stepup_token: undefined,
        site: app.resource,
        action: 'delete_note',
        agent_id: notesApp.id,
        user_id: notesApp.userId,
        details_digest: detailsDigestOf({ id: '7' }),
      });
      assert.equal(s.used.size, 1);
      assert.equal(app.mandate.status().pendingApprovals, 0);
    });

    it('the approval is used once: the same call again asks the owner anew', async () => {
      const { result } = await call('delete_note', { id: '7' });
      assert.equal(textOf(result), CALL_AGAIN);
      assert.equal(s.stepups.length, 2);
      assert.deepEqual(app.ran, [{ id: '7' }]);
    });

    it('other arguments are another request, and the pending one is kept for its own arguments', async () => {
      const { result } = await call('delete_note', { id: '8' });
      assert.equal(textOf(result), CALL_AGAIN);
      assert.equal(s.stepups.length, 3);
      assert.equal(s.stepups[2]?.details.digest, detailsDigestOf({ id: '8' }));
      assert.equal(app.mandate.status().pendingApprovals, 2);
    });

    it('an approval during the wait runs the tool in that same call', async () => {
      const answering = answerWhenFiled(4, 'approved');
      const { result } = await call('delete_note', { id: '9', });
      await answering;
      assert.equal(textOf(result), 'deleted 9');
      assert.deepEqual(app.ran, [{ id: '7' }, { id: '9' }]);
    });

    it('denied: a tool error saying so, the tool does not run, and the next identical call asks anew', async () => {
      const answering = answerWhenFiled(5, 'denied');
      const { result } = await call('archive_all', { folder: 'inbox' });
      await answering;
      assert.equal(result.isError, true);
      assert.match(textOf(result), /denied/);
      assert.equal(s.stepups[4]?.details.summary, 'archive_all(folder: "inbox")', 'the default summary');
      assert.equal(app.ran.length, 2);
      const again = await call('archive_all', { folder: 'inbox' });
      assert.equal(textOf(again.result), CALL_AGAIN);
      assert.equal(s.stepups.length, 6);
    });

    it('a step-up token approved for other arguments is refused when used up, and the tool does not run', async () => {
      // The owner approved request 3 (id 8); the stand-in answers it with a token for id 8's digest.
      // Tamper: the record now claims other details, so the token's digest no longer matches the call's.
      const record = s.stepups[2];
      assert.ok(record !== undefined);
      record.details = { ...record.details, digest: detailsDigestOf({ id: 'other' }) };
      await s.answer(record.txn, 'approved');
      const { result } = await call('delete_note', { id: '8' });
      assert.equal(result.isError, true);
      assert.match(textOf(result), /stepup_wrong_details/);
      assert.equal(app.ran.length, 2);
    });

    it('Mandate refusing to file (limit reached) or unreachable: a tool error that says so, the tool does not run', async () => {
      s.overrides.set('POST /api/v1/stepup/site', { status: 429, body: { detail: 'slow down' }, headers: { 'retry-after': '30' } });
      const limited = await call('archive_all', { folder: 'limits' });
      assert.equal(limited.result.isError, true);
      assert.match(textOf(limited.result), /too many approval requests.*try again in 30 s/);
      s.overrides.set('POST /api/v1/stepup/site', { status: 502 });
      const down = await call('archive_all', { folder: 'limits' });
      assert.match(textOf(down.result), /Mandate cannot be reached/);
      s.overrides.clear();
      assert.equal(app.ran.length, 2);
    });
  });
}

describe('defaultSummary', () => {
  it('is name(arg: JSON value, …), printable and cut to 500 characters', () => {
    assert.equal(defaultSummary('send', { to: 'ACME', amount: 250, tags: ['a'] }), 'send(to: "ACME", amount: 250, tags: ["a"])');
    assert.equal(defaultSummary('ping', {}), 'ping()');
    const odd = defaultSummary('x', { s: 'a\u202eb\u200bc\nd' });
    assert.ok(isDetailsSummary(odd), odd);
    assert.equal(odd, 'x(s: "a\\u202eb\\u200bc\\nd")');
    const long = defaultSummary('x', { s: 'é'.repeat(1000) });
    assert.equal(Array.from(long).length, 500);
    assert.ok(long.endsWith('…'));
    assert.ok(isDetailsSummary(long));
  });
});
