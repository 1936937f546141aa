import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runTs } from './helpers/child-process.ts';
import { docExamples, exampleProject, typecheck } from './helpers/doc-examples.ts';
import { HttpOwner, call, expectStatus, remoteAgent, remoteGrant, remoteStepupRequest } from './helpers/over-http.ts';
import { startServer, type ServerProcess } from './helpers/server-process.ts';

// docs/sites/receipts.md cannot rot: its examples are typechecked and run, as a reader's project,
// against a receipt fetched from a real service process: the site keeps a valid one (and refuses a
// changed one), and the auditor's script checks the kept file.

const GUIDE = 'docs/sites/receipts.md';

describe(`${GUIDE} examples`, () => {
  const all = docExamples(GUIDE);
  let dir = '';
  let server: ServerProcess;

  before(async () => {
    dir = exampleProject('mandate-receipts-docs-', all);
    server = await startServer({ name: 'receipts-docs' });
  });
  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the guide has its examples, and they typecheck', () => {
    assert.deepEqual(all.map((e) => `${e.file}${e.run ? ' (run)' : ''}`), ['keep-receipt.ts (run)', 'audit-receipt.ts (run)']);
    assert.deepEqual(typecheck(dir, all.map((e) => e.file)), []);
  });

  async function run(file: string, arg: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
    const child = runTs(join(dir, file), { args: [arg], env, cwd: dir });
    const code = await child.exited;
    return { code, out: child.output() };
  }

  it('a site keeps the receipt an agent fetched; a changed one is refused; the auditor checks the kept file', async () => {
    const owner = await HttpOwner.signUp(server, server.baseUrl, { label: 'receipts-docs' });
    const agent = await remoteAgent(server, owner, 'Shopper');
    await remoteGrant(server, owner, agent, 'shop.example');
    const txn = expectStatus(await remoteStepupRequest(server, agent, 'shop.example', 'checkout'), 200, 'step-up').body.txn_id;
    await owner.approve(txn);
    const receipt = expectStatus(await call<Record<string, unknown>>(server, 'GET', `/api/v1/receipts/${txn}`, undefined, { 'x-agent-jwt': await agent.jwt() }), 200, 'receipt').body;

    const env = { MANDATE_URL: server.baseUrl, SITE_ID: 'shop.example' };
    writeFileSync(join(dir, 'changed.json'), JSON.stringify({ receipt: { ...receipt, action: 'refund' }, body: null }));
    const changed = await run('keep-receipt.ts', 'changed.json', env);
    assert.equal(changed.code, 0, changed.out);
    assert.match(changed.out, /receipt refused: challenge_mismatch/);
    assert.equal(existsSync(join(dir, 'receipts', `${txn}.json`)), false);

    writeFileSync(join(dir, 'request.json'), JSON.stringify({ receipt, body: null }));
    const kept = await run('keep-receipt.ts', 'request.json', env);
    assert.equal(kept.code, 0, kept.out);
    assert.match(kept.out, new RegExp(`receipt kept: ${txn}`));
    const file = join('receipts', `${txn}.json`);
    assert.deepEqual(Object.keys(JSON.parse(readFileSync(join(dir, file), 'utf8')) as object), ['receipt', 'jwks', 'body']);

    const audit = await run('audit-receipt.ts', file, { MANDATE_ORIGIN: server.baseUrl });
    assert.equal(audit.code, 0, audit.out);
    assert.match(audit.out, new RegExp(`${owner.id} approved "checkout" at shop.example on \\S+Z with a passkey registered on \\S+Z`));
    const elsewhere = await run('audit-receipt.ts', file, { MANDATE_ORIGIN: 'https://mandate.example' });
    assert.notEqual(elsewhere.code, 0, 'another origin: the auditor script fails');
    assert.match(elsewhere.out, /ReceiptError/);
  });
});
