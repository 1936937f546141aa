import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { staleBuilds } from '../../../../scripts/build-if-stale.mjs';
import { type Child, REPO_ROOT, runNode } from '../helpers/child-process.ts';
import { HttpOwner, call, expectStatus, remoteAgent, remoteGrant, remoteToken } from '../helpers/over-http.ts';
import { freePort } from '../helpers/server-process.ts';
import { until } from '../helpers/until.ts';

// The README's `npm start` runs the service built to JavaScript (scripts/start.mjs), building it first
// when the build is missing or stale. Run here with a guard that fails any TypeScript load, in the main
// thread and in the worker threads, so the built service is shown to need no TypeScript loader.

const NO_TYPESCRIPT = fileURLToPath(new URL('../helpers/no-typescript-loader.mjs', import.meta.url));
const SERVER_BUILD_INFO = join(REPO_ROOT, 'packages/server/dist/.tsbuildinfo');

describe('npm start: the built service', { timeout: 240_000 }, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mandate-npm-start-'));
  const children: Child[] = [];
  after(async () => {
    await Promise.all(children.map((c) => c.stop()));
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(): Promise<{ child: Child; url: string; baseUrl: string }> {
    const port = await freePort();
    const baseUrl = `http://localhost:${port}`;
    const running = runNode('npm start', ['--import', NO_TYPESCRIPT, 'scripts/start.mjs'], {
      env: { PORT: String(port), HOST: '127.0.0.1', BASE_URL: baseUrl, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    });
    children.push(running);
    await until('the service to answer', async () => {
      if (!running.running()) throw new Error(`npm start exited (${await running.exited}):\n${running.output()}`);
      try {
        return (await fetch(`http://127.0.0.1:${port}/api/healthz`)).ok ? true : undefined;
      } catch {
        return undefined;
      }
    }, { ms: 180_000 });
    return { child: running, url: `http://127.0.0.1:${port}`, baseUrl };
  }

  it('is what the package.json start script runs', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts['start'], 'node scripts/start.mjs');
    assert.equal(pkg.scripts['prepare'], 'npm run build', 'npm ci builds');
  });

  it('builds a stale build first, then serves sign-up, the app and the worker threads with no TypeScript loader', async () => {
    utimesSync(SERVER_BUILD_INFO, 0, 0); // older than every source: stale
    assert.ok(staleBuilds().includes('server'));
    const { child: first, url, baseUrl } = await start();
    assert.match(first.output(), /mandate: building (\w+, )*server(, \w+)* \(out of date\)/);
    assert.match(first.output(), new RegExp(`Open ${baseUrl}/app to sign up`));
    assert.deepEqual(staleBuilds(), [], 'the build is current again');
    assert.ok(statSync(SERVER_BUILD_INFO).mtimeMs > 0);

    const target = { url, baseUrl };
    expectStatus(await call(target, 'GET', '/app'), 200, 'the owner app');
    // Sign-up with a passkey, an agent, a pass and a cloud verify: the signature worker thread and the
    // SQLite verify worker thread both load and answer (the guard fails a TypeScript worker).
    const owner = await HttpOwner.signUp(target, baseUrl, { label: 'npmstart' });
    const agent = await remoteAgent(target, owner);
    await remoteGrant(target, owner, agent, 'shop.example');
    const pass = expectStatus(await remoteToken(target, agent, 'shop.example'), 200, 'pass').body.access_token;
    const at = 'https://shop.example/orders';
    const verdict = await call(target, 'POST', '/api/v1/verify', { access_token: pass, dpop: await agent.proof(pass, at, 'GET'), method: 'GET', url: at });
    assert.equal(verdict.body['valid'], true, JSON.stringify(verdict.body));
    await first.stop();
    assert.doesNotMatch(first.output(), /loaded TypeScript/);
  });

  it('a second start builds nothing', async () => {
    const { child: second } = await start();
    assert.doesNotMatch(second.output(), /building/);
    await second.stop();
  });
});
