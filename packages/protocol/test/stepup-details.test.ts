import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { detailsDigestOf, verifyStepupToken } from '../src/index.ts';
import type { Agent, Service } from './helpers.ts';
import { ISSUER, NOW, SITE, mintStepup, newAgent, newService, rejectsWith } from './helpers.ts';

// The details binding of a step-up token (decisions §28, §29): a site that names the details it is
// about to act on (`detailsDigest`) accepts only a token approved for exactly those; a site that
// names none accepts any token, with or without details.
describe('verifyStepupToken detailsDigest', () => {
  const digest = detailsDigestOf({ amount: '12.00', currency: 'EUR', to: 'ACME' });
  const other = detailsDigestOf({ amount: '9999.00', currency: 'EUR', to: 'ACME' });
  let agent: Agent;
  let svc: Service;
  before(async () => {
    agent = await newAgent();
    svc = await newService();
  });
  const base = () => ({ keys: svc.resolver, issuer: ISSUER, now: NOW, site: SITE, action: 'delete order 42' });

  it('the digest the token carries: accepted, and the claims hold it', async () => {
    const claims = await verifyStepupToken(await mintStepup(svc, agent, { details_digest: digest }), { ...base(), detailsDigest: digest });
    assert.equal(claims.details_digest, digest);
  });

  it('another digest: stepup_wrong_details', async () => {
    await rejectsWith(verifyStepupToken(await mintStepup(svc, agent, { details_digest: digest }), { ...base(), detailsDigest: other }), 'stepup_wrong_details');
  });

  it('a token approved without details is refused when the option names a digest', async () => {
    await rejectsWith(verifyStepupToken(await mintStepup(svc, agent), { ...base(), detailsDigest: digest }), 'stepup_wrong_details');
  });

  it('without the option, a token with or without details is accepted', async () => {
    const bound = await verifyStepupToken(await mintStepup(svc, agent, { details_digest: digest }), base());
    assert.equal(bound.details_digest, digest);
    const bare = await verifyStepupToken(await mintStepup(svc, agent), base());
    assert.equal('details_digest' in bare, false, 'no details_digest claim appears from nowhere');
  });

  it('a token whose details_digest is not a digest is stepup_invalid, with or without the option', async () => {
    for (const bad of ['short', 42, '', `${digest}=`]) {
      const token = await mintStepup(svc, agent, { details_digest: bad as string });
      await rejectsWith(verifyStepupToken(token, base()), 'stepup_invalid');
      await rejectsWith(verifyStepupToken(token, { ...base(), detailsDigest: digest }), 'stepup_invalid');
    }
  });

  it('site and action are checked before the details', async () => {
    const token = await mintStepup(svc, agent, { details_digest: digest });
    await rejectsWith(verifyStepupToken(token, { ...base(), site: 'other.example', detailsDigest: other }), 'stepup_wrong_site');
    await rejectsWith(verifyStepupToken(token, { ...base(), action: 'delete order 43', detailsDigest: other }), 'stepup_wrong_action');
  });
});
