import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FixedClock } from '../../server/src/clock.ts';
import { getPass } from '../../server/test/helpers/passes.ts';
import { createAgent } from '../../server/test/helpers/agents.ts';
import { grantAccess, ownerWithPasskey } from '../../server/test/helpers/approvals.ts';
import { SoftAuthenticator } from '../../server/test/helpers/soft-authenticator.ts';
import { createVerifier, type Verifier } from '../src/index.ts';
import { type Mandate, PUBLIC_BASE, SITE, agentRequest, agentWithPass, quiet, startMandate } from './helpers/mandate.ts';

// Local mode against the real service where timing matters: key rotation and revocation polling.

describe('local mode against a real Mandate', () => {
  let m: Mandate;
  let v: Verifier;
  before(async () => {
    m = await startMandate({ clock: new FixedClock(Date.UTC(2026, 10, 22, 12)) });
    v = createVerifier({ mode: 'local', serviceUrl: m.url, site: SITE, publicBaseUrl: PUBLIC_BASE, now: () => m.clock.now(), onError: quiet });
    await v.start();
  });
  after(async () => {
    v.close();
    await m.close();
  });

  it('a key rotation needs no restart: the new kid is fetched, the old one still verifies', async () => {
    const old = await agentWithPass(m);
    assert.equal((await v.verify(await agentRequest(m, old))).ok, true);
    await m.services.keys.rotate();
    m.clock.advance(30_000); // past the bound on key fetches since start()
    await v.refresh();
    const fresh = await agentWithPass(m);
    assert.equal((await v.verify(await agentRequest(m, fresh))).ok, true, 'pass signed with the new key');
    assert.equal((await v.verify(await agentRequest(m, old))).ok, true, 'pass signed with the old key (grace window)');
    assert.equal(v.status().keys, 2);
  });

  it('a revocation takes effect at the next poll (within rev_ttl); after a re-approval only fresh passes pass', async () => {
    // The passkey's origin is this service's BASE_URL.
    const owner = await ownerWithPasskey(m, new SoftAuthenticator({ origin: m.url }));
    const agent = await createAgent(m, owner);
    const grant = async () => {
      await grantAccess(m, owner, agent, { site: SITE, scopes: ['orders:read'] });
      return { agent, pass: (await getPass(m, agent, SITE)).access_token };
    };
    const first = await grant();
    await v.refresh();
    assert.equal((await v.verify(await agentRequest(m, first))).ok, true);

    const grants = (await m.app.inject({ method: 'GET', url: '/api/me', headers: owner.auth })).json().grants as { id: string }[];
    const revoked = await m.app.inject({ method: 'POST', url: `/api/grants/${grants[0]?.id ?? ''}/revoke`, headers: owner.auth });
    assert.equal(revoked.statusCode, 200, revoked.body);
    assert.equal((await v.verify(await agentRequest(m, first))).ok, true, 'not known here before the next poll: the documented rev_ttl window');
    await v.refresh();
    const refused = await v.verify(await agentRequest(m, first));
    assert.equal(!refused.ok && refused.error, 'grant_revoked');

    const second = await grant(); // the owner approves again: rev_seq advances
    await v.refresh();
    assert.equal((await v.verify(await agentRequest(m, second))).ok, true, 'a pass minted after the re-approval');
    const old = await v.verify(await agentRequest(m, first));
    assert.equal(!old.ok && old.error, 'grant_revoked', 'the old pass stays refused');
  });
});
