import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { LIMITS, type PassClaims, type RevocationClaims, revocationVerdict, verifyRevocationSnapshot } from '@mandate/protocol';
import { seconds } from '../src/clock.ts';
import { expectStatus, json, type TestApp, testApp } from './helpers/app.ts';
import { createAgent, type TestAgent } from './helpers/agents.ts';
import { grantAccess, ownerWithPasskey, type Owner } from './helpers/approvals.ts';
import { getPass } from './helpers/passes.ts';

/**
 * A lifted revocation (a revoked grant superseded by a re-approval, an unblocked agent) stays in the
 * snapshot for the pass lifetime plus clock skew (600 s + 120 s, decisions §25) after the revocation
 * or unblock, so that a local verifier keeps refusing the old passes, as cloud verify does, until
 * every one of them has expired.
 */
const WINDOW_MS = (LIMITS.passLifetimeSec + 120) * 1000;
const claimsOf = (pass: string): PassClaims => decodeJwt(pass) as unknown as PassClaims;

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`revocation window (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend });
    });
    after(() => t.close());

    /** The signed content of the current snapshot, as a local verifier would hold it. */
    async function snapshot(): Promise<RevocationClaims> {
      const res = await t.app.inject({ url: '/api/v1/revocation' });
      expectStatus(res, 200);
      const jwks = json<{ keys: Record<string, unknown>[] }>(await t.app.inject({ url: '/api/v1/jwks' }));
      return verifyRevocationSnapshot(json<{ signature: string }>(res).signature, { keys: jwks, issuer: t.config.baseUrl, now: seconds(t.clock.now()) });
    }
    const verdict = async (pass: string) => revocationVerdict(claimsOf(pass), await snapshot());
    const setFlag = async (owner: Owner, agent: TestAgent, flag: string) =>
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag } }), 200);

    it('a revoked grant superseded by a narrower re-approval stays listed for 720 s after the revocation', async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner);
      await grantAccess(t, owner, agent, { scopes: ['orders:read', 'orders:write'] });
      const wide = (await getPass(t, agent)).access_token;
      assert.deepEqual(claimsOf(wide).scope, ['orders:read', 'orders:write']);
      const grant = await t.services.store.grants.activeFor(agent.id, 'shop.example');
      const revokedAt = t.clock.now();
      expectStatus(await t.app.inject({ method: 'POST', url: `/api/grants/${grant?.id}/revoke`, headers: owner.auth }), 200);
      assert.equal(await verdict(wide), 'grant_revoked');

      t.clock.advance(100_000);
      await grantAccess(t, owner, agent, { scopes: ['orders:read'] });
      assert.equal(await verdict(wide), 'grant_revoked', 'the old, wider pass stays refused after the re-approval');
      const narrow = (await getPass(t, agent)).access_token;
      assert.deepEqual(claimsOf(narrow).scope, ['orders:read']);
      assert.equal(await verdict(narrow), null, 'a pass of the new grant is accepted');

      t.clock.set(revokedAt + WINDOW_MS - 1);
      assert.equal(await verdict(wide), 'grant_revoked');
      t.clock.set(revokedAt + WINDOW_MS);
      assert.equal(await verdict(wide), null, 'by now every pass of the old grant has expired');
      assert.equal((await snapshot()).revoked_grants.some((g) => g.agent === agent.id), false);
    });

    it('an unblocked agent stays listed as revoked for 720 s after the unblock; passes minted after it pass', async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner);
      await grantAccess(t, owner, agent);
      const old = (await getPass(t, agent)).access_token;
      await setFlag(owner, agent, 'revoked');
      const blockSeq = (await t.services.store.agents.byId(agent.id))?.flagRevSeq;
      assert.equal(await verdict(old), 'agent_revoked');

      t.clock.advance(50_000);
      const unblockedAt = t.clock.now();
      await setFlag(owner, agent, 'ok');
      assert.deepEqual((await snapshot()).revoked_agents.find((a) => a.id === agent.id), { id: agent.id, flag: 'revoked', rev_seq: blockSeq });
      assert.equal(await verdict(old), 'agent_revoked', 'a pass minted before the block stays refused');
      await grantAccess(t, owner, agent);
      const fresh = (await getPass(t, agent)).access_token;
      assert.equal(await verdict(fresh), null, 'a pass minted after the unblock is accepted');

      t.clock.set(unblockedAt + WINDOW_MS - 1);
      assert.equal(await verdict(old), 'agent_revoked');
      t.clock.set(unblockedAt + WINDOW_MS);
      assert.equal((await snapshot()).revoked_agents.some((a) => a.id === agent.id), false);
    });

    it('revoked -> suspicious reads revoked at the block for 720 s, then suspicious', async () => {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner);
      await setFlag(owner, agent, 'revoked');
      const blockSeq = (await t.services.store.agents.byId(agent.id))?.flagRevSeq;
      await setFlag(owner, agent, 'suspicious');
      const suspiciousSeq = (await t.services.store.agents.byId(agent.id))?.flagRevSeq;
      const entry = async () => (await snapshot()).revoked_agents.find((a) => a.id === agent.id);
      assert.deepEqual(await entry(), { id: agent.id, flag: 'revoked', rev_seq: blockSeq });
      t.clock.advance(WINDOW_MS - 1);
      assert.deepEqual(await entry(), { id: agent.id, flag: 'revoked', rev_seq: blockSeq });
      t.clock.advance(1);
      assert.deepEqual(await entry(), { id: agent.id, flag: 'suspicious', rev_seq: suspiciousSeq });
    });
  });
}
