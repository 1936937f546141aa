/**
 * docs/reference/privacy-and-deletion.md cannot rot: its table of erasure steps is the list the
 * service runs, in order; its request is sent to a service and answers what the page shows; its
 * snippet for a new step runs against the real AccountDeletion. Every fenced block is marked.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AccountDeletion } from '../src/domain/privacy/account-deletion.ts';
import { erasureStep, type ErasureContext } from '../src/domain/privacy/erasure.ts';
import { FixedClock } from '../src/clock.ts';
import type { Repos, Store } from '../src/store/ports/index.ts';
import { REPO_ROOT } from './helpers/child-process.ts';
import { expectStatus, signUp, testApp, type TestApp } from './helpers/app.ts';

const PAGE = 'docs/reference/privacy-and-deletion.md';
const page = readFileSync(join(REPO_ROOT, PAGE), 'utf8');

interface Block {
  marker: string;
  name: string;
  lang: string;
  text: string;
}
const blocks: Block[] = [...page.matchAll(/(?:<!-- ([a-z]+): ([\w.-]+) -->\n)?```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ marker: m[1] ?? '', name: m[2] ?? '', lang: m[3] ?? '', text: m[4] ?? '' }));
const block = (marker: string, name: string): Block => {
  const b = blocks.find((x) => x.marker === marker && x.name === name);
  assert.ok(b, `${PAGE}: no block marked <!-- ${marker}: ${name} -->`);
  return b;
};

describe(`${PAGE}`, () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  it('every fenced block is marked, and so checked here', () => {
    assert.deepEqual(blocks.filter((b) => b.marker === '').map((b) => b.text.slice(0, 60)), []);
  });

  it('the table of steps is the list of steps the service runs, in order', () => {
    const table = page.split('<!-- steps -->')[1]?.split('\n\n')[0] ?? '';
    const names = [...table.matchAll(/^\| `([a-z-]+)` \|/gm)].map((m) => m[1]);
    assert.deepEqual(names, t.services.accountDeletion.stepNames());
  });

  it('the request deletes the account and answers what the page shows', async () => {
    const run = block('run', 'delete-request').text;
    const body = /-d '([^']+)'/.exec(run)?.[1];
    assert.ok(body, 'the request has a JSON body');
    const { confirm, password } = JSON.parse(body) as { confirm: string; password: string };
    assert.match(run, /-X POST https:\/\/mandate\.example\/api\/account\/delete /);
    assert.match(run, /Authorization: Bearer \$SESSION_TOKEN/);
    const owner = await signUp(t.app, confirm, password);
    const res = await t.app.inject({ method: 'POST', url: '/api/account/delete', headers: { ...owner.auth, 'content-type': 'application/json' }, payload: body });
    expectStatus(res, 200);
    assert.deepEqual(res.json(), JSON.parse(block('answer', 'delete-request').text));
    expectStatus(await t.app.inject({ url: '/api/me', headers: owner.auth }), 401);
  });

  it('the snippet for a new step registers it before profile, in the deletion transaction', async () => {
    const code = block('run', 'add-step').text;
    const deletion = new AccountDeletion({
      store: {} as Store,
      clock: new FixedClock(),
      accounts: { confirmPassword: async () => true },
      steps: [erasureStep('agents', async () => {}), erasureStep('profile', async () => {})],
      afterCommit: () => {},
    });
    // TypeScript that is also JavaScript: run as written, with the names it uses.
    new Function('accountDeletion', 'erasureStep', code)(deletion, erasureStep);
    assert.deepEqual(deletion.stepNames(), ['agents', 'recovery-codes', 'profile']);
    const deleted: string[] = [];
    const repos = { recoveryCodes: { deleteForUser: async (id: string) => void deleted.push(id) } } as unknown as Repos;
    const ctx = { repos, user: { id: 'u_1' }, now: 0 } as unknown as ErasureContext;
    const fakeStore = { transaction: async <T>(work: (r: Repos) => Promise<T>) => work(ctx.repos) } as unknown as Store;
    const running = new AccountDeletion({ store: fakeStore, clock: new FixedClock(), accounts: { confirmPassword: async () => true }, steps: [], afterCommit: () => {} });
    new Function('accountDeletion', 'erasureStep', code)(running, erasureStep);
    await running.delete({ user: { id: 'u_1', email: 'ann@example.com', passwordHash: 'h' } as ErasureContext['user'], method: 'password' }, { confirm: 'ann@example.com', password: 'x' }, '192.0.2.1');
    assert.deepEqual(deleted, ['u_1']);
  });
});
