import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createDpopProof } from '@mandate/protocol';
import { createVerifier, type MandateRequest, type Verifier, type VerifyResult } from '@mandate/site';
import { startServer, type ServerProcess } from '../helpers/server-process.ts';
import { expectStatus, HttpOwner, remoteAgent, remoteCollect, remoteDecide, remoteGrant, remoteStepupRequest, remoteToken, type RemoteAgent } from '../helpers/over-http.ts';

// A site verifying passes locally (the site SDK in local mode) while the service is unreachable:
// the service process is killed, so every call to it is refused at the TCP level. The verifier
// keeps serving from the keys and revocation list it holds until that list is older than
// max_stale, then refuses (503 revocation_stale); step-ups, which only the service can use up,
// are refused at once. packages/site/test/local-mode.test.ts covers the same rules against a stub;
// this is the real service going away.

const SITE = 'shop.example';
const PUBLIC_BASE = `https://${SITE}`;
const REV_TTL_SEC = 60;
const MAX_STALE_SEC = 300;

describe('local verification with the service unreachable', { timeout: 120_000 }, () => {
  let node: ServerProcess | undefined;
  let verifier: Verifier | undefined;
  let agent: RemoteAgent;
  let pass = '';
  let stepupToken = '';
  /** The verifier's clock: real time plus however far the test has moved it on. */
  let offsetMs = 0;
  const now = () => Date.now() + offsetMs;

  before(async () => {
    node = await startServer({ name: 'service', env: { DATABASE_URL: '' } });
    const owner = await HttpOwner.signUp(node, node.baseUrl, { label: 'site-owner' });
    agent = await remoteAgent(node, owner, 'Offline shopper');
    await remoteGrant(node, owner, agent, SITE);
    pass = expectStatus(await remoteToken(node, agent, SITE), 200, 'token').body.access_token;
    const txn = expectStatus(await remoteStepupRequest(node, agent, SITE, 'checkout'), 200, 'step-up request').body.txn_id;
    expectStatus(await remoteDecide(node, owner, txn), 200, 'approve step-up');
    stepupToken = String((await remoteCollect(node, agent, txn)).body.stepup_token);

    // The site reaches the service at its listening address; passes name its BASE_URL as issuer.
    verifier = createVerifier({ mode: 'local', serviceUrl: node.url, issuer: node.baseUrl, site: SITE, publicBaseUrl: PUBLIC_BASE, revTtlSec: REV_TTL_SEC, maxStaleSec: MAX_STALE_SEC, now, onError: () => {} });
    await verifier.start();
  });

  after(async () => {
    verifier?.close();
    await node?.stop();
  });

  /** An agent request to the site, its DPoP proof made at the verifier's time. */
  async function request(a: RemoteAgent, o: { stepup?: string } = {}): Promise<MandateRequest> {
    const dpop = await createDpopProof(a.privateKey, a.publicJwk, { htm: 'POST', htu: `${PUBLIC_BASE}/orders`, accessToken: pass, iat: Math.floor(now() / 1000), jti: randomBytes(12).toString('base64url') });
    return { method: 'POST', url: '/orders', headers: { authorization: `DPoP ${pass}`, dpop, ...(o.stepup ? { 'x-service-stepup': o.stepup } : {}) } };
  }
  const outcome = (r: VerifyResult) => (r.ok ? 'ok' : `${r.status} ${r.error}`);

  it('serves until the revocation list it holds is max_stale old, then refuses; step-ups are refused at once', async () => {
    assert.ok(node && verifier);
    const v = verifier;
    assert.equal(outcome(await v.verify(await request(agent))), 'ok', 'verifies while the service is up');

    await node.kill('SIGKILL');
    await assert.rejects(v.refresh(), 'the service is unreachable');
    assert.equal(outcome(await v.verify(await request(agent))), 'ok', 'still serves from what it holds');
    const stepup = await v.verify(await request(agent, { stepup: stepupToken }), { action: 'checkout' });
    assert.equal(outcome(stepup), '503 service_unavailable', 'a step-up can only be used up by the service');

    // Just before max_stale (the list's age counts from when the service signed it)...
    const age = v.status().revocationAgeSec;
    assert.ok(age !== undefined && age < MAX_STALE_SEC, `revocation list age ${String(age)}`);
    offsetMs = (MAX_STALE_SEC - age - 2) * 1000;
    await assert.rejects(v.refresh());
    assert.equal(outcome(await v.verify(await request(agent))), 'ok', 'serves up to max_stale');
    assert.equal(v.status().ready, true);
    // ...and past it: refused, because it can no longer know about revocations.
    offsetMs += 3000;
    assert.equal(outcome(await v.verify(await request(agent))), '503 revocation_stale');
    assert.equal(v.status().ready, false);
  });
});
