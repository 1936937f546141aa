import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { runTs } from './helpers/child-process.ts';
import { docExamples, exampleProject, typecheck } from './helpers/doc-examples.ts';
import { HttpOwner, expectStatus, remoteAgent, remoteGrant, remoteToken } from './helpers/over-http.ts';
import { startServer, type ServerProcess } from './helpers/server-process.ts';

// docs/sites/site-stepup.md cannot rot: its example is typechecked and run, as a reader's project,
// against a real service process, while the owner answers the card with a software passkey.

const GUIDE = 'docs/sites/site-stepup.md';

describe(`${GUIDE} examples`, () => {
  const all = docExamples(GUIDE);
  let dir = '';
  let server: ServerProcess;

  before(async () => {
    dir = exampleProject('mandate-site-stepup-docs-', all);
    server = await startServer({ name: 'site-stepup-docs' });
  });
  after(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the guide has its example, and it typechecks', () => {
    assert.deepEqual(all.map((e) => `${e.file}${e.run ? ' (run)' : ''}`), ['ask-owner.ts (run)']);
    assert.deepEqual(typecheck(dir, all.map((e) => e.file)), []);
  });

  it('askOwner: the card says the site asks; approved, the token is used up and the receipt checks; denied, it says so', async () => {
    const owner = await HttpOwner.signUp(server, server.baseUrl, { label: 'site-stepup-docs' });
    const agent = await remoteAgent(server, owner, 'Payer');
    await remoteGrant(server, owner, agent, 'shop.example');
    const pass = expectStatus(await remoteToken(server, agent, 'shop.example'), 200, 'pass').body.access_token;
    const env = { MANDATE_URL: server.baseUrl, SITE_ID: 'shop.example', PASS: pass };

    const approving = runTs(join(dir, 'ask-owner.ts'), { env, cwd: dir });
    const card = await owner.nextPending(agent.id, 'stepup');
    assert.deepEqual([card.filed_by, card.action, card.site], ['site', 'transfer', 'shop.example']);
    await owner.approve(card.id);
    assert.equal(await approving.exited, 0, approving.output());
    assert.match(approving.output(), new RegExp(`approved: ${card.id} by ${owner.id}`));

    const denying = runTs(join(dir, 'ask-owner.ts'), { env, cwd: dir });
    await owner.deny((await owner.nextPending(agent.id, 'stepup')).id);
    assert.equal(await denying.exited, 0, denying.output());
    assert.match(denying.output(), /not approved: denied/);
  });
});
