import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LIMITS } from '@mandate/protocol';
import { createVerifier, type Verifier, type VerifyResult } from '@mandate/site';
import { newId } from '../src/domain/ids.ts';
import { serverWithStore } from './helpers/server-with-store.ts';
import { HttpOwner, call, expectStatus, remoteAgent, remoteGrant, remoteToken, type RemoteAgent } from './helpers/over-http.ts';
import { revokeAllAt, seedGrants } from './helpers/revocation-seed.ts';
import { until } from './helpers/until.ts';

// Issue 14, item 1, end to end: the real server as its own process, and a site verifying passes
// locally with the site SDK, which refuses everything once its list is older than max_stale (here
// 10 s) and ignores a list it cannot take (over 8 MiB, or one that does not verify). 10 000 grants
// of one agent are revoked, in the server's own database, dated a little under 720 s ago: the served
// list carries them, then sheds them once the window has passed, while a pass of another agent
// verifies all along.

const SITE = 'shop.example';
const PUBLIC_BASE = `https://${SITE}`;
const WINDOW_MS = (LIMITS.passLifetimeSec + 120) * 1000;
/** How long before the end of the window the seeded revocations are dated. */
const LEFT_MS = 8_000;
const SEEDED = 10_000;

interface Sample {
  at: number;
  bytes: number;
  seeded: number;
  revSeq: number;
  verdict: string;
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`revocation list compaction over HTTP (${backend})`, { timeout: 180_000 }, () => {
    let verifier: Verifier | undefined;
    const errors: Error[] = [];
    after(() => verifier?.close());
    const service = serverWithStore(backend, 'mandate-compaction-');

    it('a local-mode site keeps verifying a pass while 10 000 entries are served and then age out', async (t) => {
      assert.ok(service.node);
      const n = service.node;
      const owner = await HttpOwner.signUp(n, n.baseUrl, { label: 'compaction' });
      const agent: RemoteAgent = await remoteAgent(n, owner, 'Honest shopper');
      await remoteGrant(n, owner, agent, SITE);
      const pass = expectStatus(await remoteToken(n, agent, SITE), 200, 'token').body.access_token;
      const verify = async (v: Verifier): Promise<string> => {
        const r: VerifyResult = await v.verify({ method: 'POST', url: '/orders', headers: { authorization: `DPoP ${pass}`, dpop: await agent.proof(pass, `${PUBLIC_BASE}/orders`, 'POST') } });
        return r.ok ? 'ok' : `${r.status} ${r.error}`;
      };

      // The finding: one owner's agent approved for made-up sites, then revoked (another owner's
      // rows, written into the server's database while it runs). The grants are written first: on
      // SQLite that holds this process's event loop for a while, where the site below runs too.
      const victim = newId('ag');
      const store = await service.openStore();
      let revokedAt: number;
      let seededSeq: number;
      try {
        await seedGrants(store, { userId: newId('u'), agentId: victim, count: SEEDED, at: Date.now() - WINDOW_MS });
        verifier = createVerifier({ mode: 'local', serviceUrl: n.url, issuer: n.baseUrl, site: SITE, publicBaseUrl: PUBLIC_BASE, revTtlSec: 1, maxStaleSec: 10, onError: (e) => errors.push(e) });
        await verifier.start();
        assert.equal(await verify(verifier), 'ok');
        revokedAt = Date.now() - WINDOW_MS + LEFT_MS;
        seededSeq = await revokeAllAt(store, victim, revokedAt);
      } finally {
        await store.close();
      }
      const v = verifier;
      const samples: Sample[] = [];
      const sample = async () => {
        const res = await fetch(`${n.url}/api/v1/revocation`);
        assert.equal(res.status, 200);
        const text = await res.text();
        const body = JSON.parse(text) as { rev_seq: number; revoked_grants: { agent: string }[] };
        samples.push({ at: Date.now(), bytes: Buffer.byteLength(text), seeded: body.revoked_grants.filter((g) => g.agent === victim).length, revSeq: body.rev_seq, verdict: await verify(v) });
      };
      await sample();
      await v.refresh();
      assert.equal(v.status().revSeq, seededSeq, 'the site took the long list');
      while (Date.now() < revokedAt + WINDOW_MS + 2_000 || samples[samples.length - 1]?.seeded !== 0) {
        if (Date.now() > revokedAt + WINDOW_MS + 30_000) break;
        await new Promise((r) => setTimeout(r, 500));
        await sample();
      }
      // The site holds a list signed after the window had passed: only the short one is served by then.
      const signedAfterWindow = () => Date.now() - (v.status().revocationAgeSec ?? Infinity) * 1000 >= revokedAt + WINDOW_MS + 1_000;
      await until('the site to hold a list signed after the window', async () => {
        await v.refresh();
        return signedAfterWindow() || undefined;
      }, { ms: 30_000 });

      const first = samples[0];
      const last = samples[samples.length - 1];
      assert.ok(first && last);
      t.diagnostic(`served list: ${first.bytes} bytes with ${first.seeded} seeded entries, then ${last.bytes} bytes with ${last.seeded} (${samples.length} samples)`);
      assert.equal(first.seeded, SEEDED);
      assert.ok(first.bytes > 1_000_000, `${first.bytes} bytes`);
      assert.equal(last.seeded, 0, 'the entries left the served list');
      assert.ok(last.bytes < 5_000, `${last.bytes} bytes`);
      assert.ok(last.at >= revokedAt + WINDOW_MS, 'and not before the window had passed');
      const early = samples.filter((s) => s.at < revokedAt + WINDOW_MS - 1_000);
      assert.ok(early.length > 0 && early.every((s) => s.seeded === SEEDED), 'listed in full while in the window');
      for (let i = 1; i < samples.length; i++) assert.ok((samples[i]?.revSeq ?? 0) >= (samples[i - 1]?.revSeq ?? 0), 'rev_seq never went down');
      assert.equal(last.revSeq, seededSeq, 'nor moved when the entries left');
      assert.deepEqual(samples.filter((s) => s.verdict !== 'ok'), [], 'the pass verified throughout');
      assert.equal(await verify(v), 'ok');
      const status = v.status();
      assert.equal(status.ready, true);
      assert.equal(status.revSeq, seededSeq);
      assert.deepEqual(errors.map((e) => e.message), [], 'the site took every list it fetched');
      const health = await call(n, 'GET', '/api/healthz');
      assert.equal(health.status, 200);
    });
  });
}
