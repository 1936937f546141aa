import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { verifyStepupToken } from '../src/index.ts';
import type { Agent, Service } from './helpers.ts';
import { ISSUER, NOW, SITE, mintStepup, newAgent, newService, rejectsWith, stepupClaims } from './helpers.ts';

// The optional person binding of a step-up token (used by local verifiers: the step-up must be
// approved by the person of the pass, as cloud verify requires).
describe('verifyStepupToken userId', () => {
  let agent: Agent;
  let svc: Service;
  before(async () => {
    agent = await newAgent();
    svc = await newService();
  });
  const base = () => ({ keys: svc.resolver, issuer: ISSUER, now: NOW, site: SITE, action: 'delete order 42' });

  it('accepts the person of the token', async () => {
    const token = await mintStepup(svc, agent);
    const claims = await verifyStepupToken(token, { ...base(), userId: stepupClaims(agent).user });
    assert.equal(claims.user, stepupClaims(agent).user);
  });

  it('another person: stepup_invalid', async () => {
    await rejectsWith(verifyStepupToken(await mintStepup(svc, agent), { ...base(), userId: 'u_someone_else' }), 'stepup_invalid');
  });

  it('is checked after site and action, as cloud verify orders them', async () => {
    const token = await mintStepup(svc, agent);
    await rejectsWith(verifyStepupToken(token, { ...base(), action: 'delete order 43', userId: 'u_someone_else' }), 'stepup_wrong_action');
    await rejectsWith(verifyStepupToken(token, { ...base(), site: 'other.example', userId: 'u_someone_else' }), 'stepup_wrong_site');
  });
});
