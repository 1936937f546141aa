import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { VerifyStepupOptions } from '../src/index.ts';
import { revocationVerdict, verifyRevocationSnapshot, verifyStepupToken } from '../src/index.ts';
import type { Agent, Service } from './helpers.ts';
import { ISSUER, NOW, SITE, mintPass, mintRevocation, mintStepup, newAgent, newService, passClaims, rejectsWith, revocationClaims, stepupClaims } from './helpers.ts';

let agent: Agent;
let other: Agent;
let svc: Service;
before(async () => {
  agent = await newAgent();
  other = await newAgent();
  svc = await newService();
});

function opts(over: Partial<VerifyStepupOptions> = {}): VerifyStepupOptions {
  return { keys: svc.resolver, issuer: ISSUER, now: NOW, site: SITE, action: 'delete order 42', ...over };
}

describe('verifyStepupToken', () => {
  it('accepts a valid step-up for the site and action', async () => {
    const claims = await verifyStepupToken(await mintStepup(svc, agent), opts({ agentId: stepupClaims(agent).sub, jkt: agent.jkt }));
    assert.deepEqual(claims, stepupClaims(agent));
  });

  it('expired: stepup_used_or_expired', async () => {
    const token = await mintStepup(svc, agent, { iat: NOW - 60, exp: NOW });
    await rejectsWith(verifyStepupToken(token, opts()), 'stepup_used_or_expired');
  });

  it('other site, other action', async () => {
    const token = await mintStepup(svc, agent);
    await rejectsWith(verifyStepupToken(token, opts({ site: 'other.example' })), 'stepup_wrong_site');
    await rejectsWith(verifyStepupToken(token, opts({ action: 'delete order 43' })), 'stepup_wrong_action');
    await rejectsWith(verifyStepupToken(token, opts({ action: 'Delete order 42' })), 'stepup_wrong_action');
  });

  it('another agent or key: stepup_invalid', async () => {
    const token = await mintStepup(svc, agent);
    await rejectsWith(verifyStepupToken(token, opts({ agentId: 'ag_other' })), 'stepup_invalid');
    await rejectsWith(verifyStepupToken(token, opts({ jkt: other.jkt })), 'stepup_invalid');
  });

  it('malformed claims or garbage: stepup_invalid', async () => {
    await rejectsWith(verifyStepupToken(await mintStepup(svc, agent, { act: [] }), opts()), 'stepup_invalid');
    await rejectsWith(verifyStepupToken(await mintPass(svc, agent), opts()), 'stepup_invalid');
    for (const g of [undefined, '', 'a.b', 'a.b.c.d.e', 42]) await rejectsWith(verifyStepupToken(g, opts()), 'stepup_invalid');
  });
});

describe('verifyRevocationSnapshot and revocationVerdict', () => {
  it('returns the signed lists', async () => {
    const lists = {
      revoked_agents: [{ id: 'ag_1', flag: 'revoked', rev_seq: 5 }],
      revoked_grants: [{ agent: 'ag_2', site: SITE, rev_seq: 6 }],
    };
    const snap = await verifyRevocationSnapshot(await mintRevocation(svc, lists), { keys: svc.resolver, issuer: ISSUER, now: NOW });
    assert.deepEqual(snap, revocationClaims(lists));
  });

  it('too old for maxAgeSec: token_expired; malformed entries: invalid_token', async () => {
    const token = await mintRevocation(svc, { iat: NOW - 301 });
    const o = { keys: svc.resolver, issuer: ISSUER, now: NOW };
    await verifyRevocationSnapshot(token, o);
    await rejectsWith(verifyRevocationSnapshot(token, { ...o, maxAgeSec: 300 }), 'token_expired');
    const bad = await mintRevocation(svc, { revoked_agents: [{ id: 'ag_1', flag: 'revoked', rev_seq: -1 }] });
    await rejectsWith(verifyRevocationSnapshot(bad, o), 'invalid_token');
    await rejectsWith(verifyRevocationSnapshot('a.b.c', o), 'invalid_token');
  });

  it('verdict: listed agent or grant refuses passes minted up to the entry rev_seq', () => {
    const pass = passClaims(agent, { rev_seq: 5 });
    const snap = (over: Parameters<typeof revocationClaims>[0]) => revocationClaims(over);
    assert.equal(revocationVerdict(pass, snap({})), null);
    assert.equal(revocationVerdict(pass, snap({ revoked_agents: [{ id: pass.sub, flag: 'revoked', rev_seq: 5 }] })), 'agent_revoked');
    assert.equal(revocationVerdict(pass, snap({ revoked_agents: [{ id: pass.sub, flag: 'revoked', rev_seq: 9 }] })), 'agent_revoked');
    assert.equal(revocationVerdict(pass, snap({ revoked_agents: [{ id: pass.sub, flag: 'revoked', rev_seq: 4 }] })), null);
    assert.equal(revocationVerdict(pass, snap({ revoked_agents: [{ id: pass.sub, flag: 'suspicious', rev_seq: 9 }] })), null);
    assert.equal(revocationVerdict(pass, snap({ revoked_agents: [{ id: 'ag_other', flag: 'revoked', rev_seq: 9 }] })), null);
    assert.equal(revocationVerdict(pass, snap({ revoked_grants: [{ agent: pass.sub, site: SITE, rev_seq: 6 }] })), 'grant_revoked');
    assert.equal(revocationVerdict(pass, snap({ revoked_grants: [{ agent: pass.sub, site: 'other.example', rev_seq: 6 }] })), null);
    assert.equal(revocationVerdict(pass, snap({ revoked_grants: [{ agent: pass.sub, site: SITE, rev_seq: 4 }] })), null);
  });
});
