import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { freshPostgresDatabase } from '../helpers/postgres.ts';
import { startServer, type ServerProcess } from '../helpers/server-process.ts';
import { call, expectStatus, HttpOwner, remoteAccessRequest, remoteAgent, remoteGrant, remoteToken } from '../helpers/over-http.ts';
import { startIdentityProviderStandIn, type IdentityProviderStandIn } from '../helpers/stand-ins/identity-provider.ts';
import { requestArb, routesOf, sendRaw, type FuzzRequest, type Genuine, type OpenApi } from '../helpers/fuzz-requests.ts';

// Thousands of generated malformed requests against a real server process, spread over every
// route of its OpenAPI description (test/http-basics.test.ts walks the same routes with a fixed
// list of bad inputs, in-process). Every answer must be below 500 and carry a {detail}, the process
// must stay up, and its memory must stay bounded. Runs on both databases (PostgreSQL refuses some
// values SQLite stores). FUZZ_SEED=<n> replays a run; FUZZ_RUNS=<n> changes its size.

const RUNS = Number(process.env.FUZZ_RUNS ?? 5000);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
/** Memory may grow while caches and JIT warm up, but not with the number of requests. */
const RSS_GROWTH_LIMIT_MB = 150;

/** Resident memory of a process, in MB (Linux). */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  if (!line) throw new Error(`no VmRSS for process ${pid}`);
  return Number(line.replace(/\D+/g, '')) / 1024;
}

const describeRequest = (r: FuzzRequest): string =>
  `${r.method} ${r.path.slice(0, 300)}\nheaders: ${JSON.stringify(r.headers).slice(0, 500)}\nbody (${r.body?.length ?? 0} bytes): ${r.body?.subarray(0, 300).toString('utf8') ?? '-'}`;

function detailOf(body: string): unknown {
  try {
    return (JSON.parse(body) as { detail?: unknown }).detail;
  } catch {
    // A person's browser at /oidc/authorize (decisions §28) gets an error page that says what is wrong.
    return /id="cn-error" class="cn-status cn-error">([^<]+)</.exec(body)?.[1];
  }
}

function fuzzSuite(backend: 'sqlite' | 'postgres', runs: number): void {
  describe(`fuzzing every route with malformed requests (${backend})`, { timeout: 420_000 }, () => {
    let node: ServerProcess | undefined;
    let drop: (() => Promise<void>) | undefined;
    let issuer: IdentityProviderStandIn | undefined;
    let genuine: Genuine;

    before(async () => {
      let databaseUrl = '';
      if (backend === 'postgres') {
        const db = await freshPostgresDatabase();
        databaseUrl = db.url;
        drop = db.drop;
      }
      // A configured identity provider (a real OpenID Provider on loopback): the /oauth/{provider} routes
      // then get the fuzz with a provider they know, down to discovery at the issuer.
      issuer = await startIdentityProviderStandIn();
      node = await startServer({ name: `fuzzed node (${backend})`, env: { DATABASE_URL: databaseUrl, OUTBOUND_ALLOW_LOOPBACK: 'true', OAUTH_PROVIDERS: 'google', ...issuer.env('google') } });
      issuer.allowRedirectUris([`${node.baseUrl}/api/oauth/google/callback`]);
      // Genuine credentials and ids, so that many requests get past authentication.
      const owner = await HttpOwner.signUp(node, node.baseUrl, { label: 'fuzz' });
      const agent = await remoteAgent(node, owner, 'Fuzzed');
      await remoteGrant(node, owner, agent, 'shop.example');
      const pending = expectStatus(await remoteAccessRequest(node, agent, 'books.example'), 200, 'a pending request').body.txn_id;
      const pass = expectStatus(await remoteToken(node, agent, 'shop.example'), 200, 'a pass').body.access_token;
      genuine = { sessionToken: owner.auth.authorization?.slice('Bearer '.length) ?? '', agentId: agent.id, agentJwt: await agent.jwt(), userId: owner.id, site: 'shop.example', provider: 'google', txnId: pending, pass };
    });

    after(async () => {
      await node?.stop();
      await drop?.();
      await issuer?.stop();
    });

    // Found by this fuzzer, kept as fixed cases: a deeply nested body once overflowed the stack of
    // the NUL check (500), and Node's parser errors were answered without a {detail} body.
    it('answers a body nested 30,000 levels deep with 422 and oversized headers with 431, both with {detail}', async () => {
      assert.ok(node);
      for (const body of ['['.repeat(30_000) + ']'.repeat(30_000), '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000)]) {
        const deep = await sendRaw(node.port, { method: 'POST', path: '/api/users', headers: { 'content-type': 'application/json' }, body: Buffer.from(body) });
        assert.ok(deep !== 'refused-locally');
        assert.equal(deep.status, 422, deep.body);
        assert.match(deep.body, /nested deeper than/);
      }
      const huge = await sendRaw(node.port, { method: 'GET', path: '/api/me', headers: { cookie: 'x'.repeat(40_000) } });
      assert.ok(huge !== 'refused-locally');
      assert.equal(huge.status, 431);
      assert.deepEqual(JSON.parse(huge.body), { detail: 'request headers too large' });
      const garbled = await sendRaw(node.port, { method: 'GET', path: '/api/healthz', headers: { 'transfer-encoding': 'chunked, gzip, chunked' } });
      assert.ok(garbled !== 'refused-locally');
      assert.ok(garbled.status >= 400 && garbled.status < 500, `${garbled.status} ${garbled.body}`);
      assert.equal(typeof detailOf(garbled.body), 'string');
      assert.ok(node.alive());
    });

    it(`${runs} generated requests: no 5xx, no crash, memory bounded`, async (t) => {
      assert.ok(node);
      const n = node;
      t.diagnostic(`seed ${SEED} (replay with FUZZ_SEED=${SEED})`);
      const spec = expectStatus(await call<OpenApi>(n, 'GET', '/openapi.json'), 200, 'openapi').body;
      const routes = routesOf(spec);
      assert.ok(routes.length > 30, `only ${routes.length} routes in the OpenAPI description`);

      const statuses = new Map<number, number>();
      const routesHit = new Set<string>();
      let sent = 0;
      let notSendable = 0;
      let warmRss = 0;
      let peakRss = 0;
      const property = fc.asyncProperty(requestArb(routes, genuine), async (r) => {
        const answer = await sendRaw(n.port, r).catch((e: Error) => {
          throw new Error(`no answer (${e.message}); server ${n.alive() ? 'still running' : 'DIED'}\n${describeRequest(r)}\n${n.logs().slice(-3000)}`);
        });
        if (answer === 'refused-locally') {
          notSendable++;
          return;
        }
        sent++;
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        routesHit.add(`${r.method} ${r.path.split('?')[0]}`);
        assert.ok(answer.status < 500, `${answer.status} ${answer.body.slice(0, 300)}\n${describeRequest(r)}\n${n.logs().slice(-3000)}`);
        if (answer.status >= 400 && r.method !== 'HEAD') {
          const detail = detailOf(answer.body);
          assert.ok(typeof detail === 'string' || Array.isArray(detail), `${answer.status} without a {detail} body: ${answer.body.slice(0, 200)}\n${describeRequest(r)}`);
        }
        if (sent === Math.min(500, Math.floor(runs / 4))) warmRss = rssMb(n.pid);
        if (sent % 250 === 0) peakRss = Math.max(peakRss, rssMb(n.pid));
      });
      // fc.check rather than fc.assert: its report would print the whole (huge) request; ours is cut short.
      const run = await fc.check(property, { numRuns: runs, seed: SEED, endOnFailure: true });
      if (run.failed) {
        const why = run.errorInstance instanceof Error ? run.errorInstance.message : String(run.errorInstance);
        assert.fail(`request ${run.numRuns} of seed ${SEED} failed (replay with FUZZ_SEED=${SEED}):\n${why}`);
      }

      assert.ok(n.alive(), 'the server process is still running');
      expectStatus(await call(n, 'GET', '/api/healthz'), 200, 'healthy after the fuzzing');
      const endRss = rssMb(n.pid);
      t.diagnostic(`sent ${sent}, not sendable by node:http ${notSendable}; statuses ${JSON.stringify([...statuses].sort((a, b) => a[0] - b[0]))}; RSS after warm-up ${warmRss.toFixed(0)} MB, peak ${peakRss.toFixed(0)} MB, end ${endRss.toFixed(0)} MB`);
      assert.ok(sent >= runs * 0.95, `only ${sent} of ${runs} requests could be sent`);
      assert.ok(Math.max(peakRss, endRss) - warmRss < RSS_GROWTH_LIMIT_MB, `RSS grew from ${warmRss.toFixed(0)} MB to ${Math.max(peakRss, endRss).toFixed(0)} MB`);
      // The generator must really spread over the routes (distinct paths with ids count separately).
      assert.ok(routesHit.size > routes.length, `only ${routesHit.size} distinct method+path pairs`);
      const withProvider = [...routesHit].filter((r) => /\/oauth\/google(\/|$)/.test(r));
      // (about 3% of the requests; a small FUZZ_RUNS may miss some)
      if (runs >= 1000) assert.ok(withProvider.length >= 4, `the configured provider reached only ${withProvider.join(', ')}`);
    });
  });
}

fuzzSuite('sqlite', RUNS);
fuzzSuite('postgres', Math.ceil(RUNS * 0.6));
