import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LIMITS } from '@mandate/protocol';
import { createVerifier, type Verifier, type VerifyResult } from '@mandate/site';
import { AGENT_LIMITS } from '../src/domain/agents/agents.ts';
import { COURTESY_CAP } from '../src/domain/revocation/revocation-bound.ts';
import { newId } from '../src/domain/ids.ts';
import { serverWithStore } from './helpers/server-with-store.ts';
import { HttpOwner, call, expectStatus, remoteAgent, remoteGrant, remoteToken } from './helpers/over-http.ts';
import { seedBlockedAgents } from './helpers/revocation-seed.ts';

// Issue 22 end to end, at the real bound: the built server as its own process, and a site verifying
// passes locally with the site SDK. 101 hostile accounts each block their 100 agents, more than
// COURTESY_CAP (10 000) blocks in all, written into the server's database dated past the 720 s window
// (as after a mass sign-up 12 minutes ago). An ordinary owner has two agents blocked that long too.
// The served list stays within the bound and keeps the ordinary owner's entries; that owner then
// blocks an agent whose pass is live, and the local-mode site refuses the pass at its next refresh.

const SITE = 'shop.example';
const PUBLIC_BASE = `https://${SITE}`;
const WINDOW_MS = (LIMITS.passLifetimeSec + 120) * 1000;
const HOSTILE = Math.floor(COURTESY_CAP / AGENT_LIMITS.livePerOwner) + 1;

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`revocation list bound over HTTP (${backend})`, { timeout: 240_000 }, () => {
    let verifier: Verifier | undefined;
    const errors: Error[] = [];
    after(() => verifier?.close());
    const service = serverWithStore(backend, 'mandate-bound-');

    it('mass blocked agents stay within the bound; an ordinary owner\'s entries stay and a revocation refuses a live pass', async (t) => {
      assert.ok(service.node);
      const n = service.node;
      const owner = await HttpOwner.signUp(n, n.baseUrl, { label: 'ordinary' });
      const agent = await remoteAgent(n, owner, 'Shopper');
      await remoteGrant(n, owner, agent, SITE);
      const pass = expectStatus(await remoteToken(n, agent, SITE), 200, 'token').body.access_token;
      const verify = async (v: Verifier): Promise<string> => {
        const r: VerifyResult = await v.verify({ method: 'POST', url: '/orders', headers: { authorization: `DPoP ${pass}`, dpop: await agent.proof(pass, `${PUBLIC_BASE}/orders`, 'POST') } });
        return r.ok ? 'ok' : `${r.status} ${r.error}`;
      };

      const agedAt = Date.now() - WINDOW_MS - 60_000;
      const hostile: string[][] = [];
      let ownersOld: string[] = [];
      const store = await service.openStore();
      try {
        ownersOld = await seedBlockedAgents(store, { userId: owner.id, count: 2, at: agedAt });
        for (let i = 0; i < HOSTILE; i++) hostile.push(await seedBlockedAgents(store, { userId: newId('u'), count: AGENT_LIMITS.livePerOwner, at: agedAt }));
      } finally {
        await store.close();
      }
      const hostileIds = hostile.flat();
      assert.ok(hostileIds.length > COURTESY_CAP);

      const served = async () => {
        const res = await fetch(`${n.url}/api/v1/revocation`);
        assert.equal(res.status, 200);
        const text = await res.text();
        return { bytes: Buffer.byteLength(text), body: JSON.parse(text) as { rev_seq: number; revoked_agents: { id: string; flag: string; rev_seq: number }[] } };
      };
      const first = await served();
      const listed = new Set(first.body.revoked_agents.map((a) => a.id));
      const hostileListed = hostileIds.filter((id) => listed.has(id)).length;
      t.diagnostic(`served: ${first.body.revoked_agents.length} agents, ${first.bytes} bytes; ${hostileListed} of ${hostileIds.length} hostile blocks`);
      assert.ok(first.body.revoked_agents.length <= COURTESY_CAP, `${first.body.revoked_agents.length} agents listed`);
      assert.equal(hostileListed, COURTESY_CAP - ownersOld.length);
      for (const id of ownersOld) assert.ok(listed.has(id), 'the ordinary owner\'s long-blocked agents stay listed');
      const perAccount = hostile.map((ids) => ids.filter((id) => listed.has(id)).length);
      assert.ok(Math.max(...perAccount) - Math.min(...perAccount) <= 1, `shared evenly: ${Math.min(...perAccount)} to ${Math.max(...perAccount)}`);

      verifier = createVerifier({ mode: 'local', serviceUrl: n.url, issuer: n.baseUrl, site: SITE, publicBaseUrl: PUBLIC_BASE, revTtlSec: 1, maxStaleSec: 10, onError: (e) => errors.push(e) });
      await verifier.start();
      assert.equal(await verify(verifier), 'ok', 'the site took the list and accepts the live pass');

      // The ordinary owner blocks the agent: a fresh entry, never dropped, however many blocks are aged.
      expectStatus(await owner.call('POST', `/api/agents/${agent.id}/flag`, { flag: 'revoked' }), 200, 'block');
      await verifier.refresh();
      assert.equal(await verify(verifier), '401 agent_revoked', 'the local-mode site refuses the live pass at once');
      const second = await served();
      assert.ok(second.body.rev_seq > first.body.rev_seq, 'rev_seq only grows');
      assert.ok(second.body.revoked_agents.some((a) => a.id === agent.id && a.flag === 'revoked'));
      assert.ok(second.body.revoked_agents.length <= COURTESY_CAP + 1, 'the bound, plus the block of the window');
      assert.deepEqual(errors.map((e) => e.message), [], 'the site took every list it fetched');
      assert.equal((await call(n, 'GET', '/api/healthz')).status, 200);
    });
  });
}
