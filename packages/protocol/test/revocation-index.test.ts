import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { PassClaims, RevocationClaims } from '../src/index.ts';
import { RevocationIndex, revocationVerdict } from '../src/index.ts';
import { ISSUER, NOW } from './helpers.ts';

// The index must answer exactly what the walk over the list answers, for any list and any pass.

const AGENTS = ['ag_a', 'ag_b', 'ag_c'];
const SITES = ['shop.example', 'news.example'];

const pass = (sub: string, aud: string, rev_seq: number): PassClaims => ({
  iss: ISSUER, sub, aud, user: 'u_1', scope: ['list'], cnf: { dpop: 'k', jkt: 'k' }, type: 'access', iat: NOW, exp: NOW + 600, jti: 'j', grant: 'gr_1', rev_seq,
});

const snapshot = (over: Partial<RevocationClaims>): RevocationClaims => ({ type: 'revocation', iss: ISSUER, iat: NOW, rev_seq: 20, revoked_agents: [], revoked_grants: [], ...over });

describe('RevocationIndex', () => {
  it('gives the same verdict as revocationVerdict for every list and pass', () => {
    const seq = fc.integer({ min: 0, max: 12 });
    const agentEntry = fc.record({ id: fc.constantFrom(...AGENTS), flag: fc.constantFrom('revoked', 'suspicious', 'ok', 'other'), rev_seq: seq });
    const grantEntry = fc.record({ agent: fc.constantFrom(...AGENTS), site: fc.constantFrom(...SITES), rev_seq: seq });
    fc.assert(
      fc.property(fc.array(agentEntry, { maxLength: 8 }), fc.array(grantEntry, { maxLength: 8 }), fc.constantFrom(...AGENTS), fc.constantFrom(...SITES), seq, (agents, grants, sub, aud, revSeq) => {
        const snap = snapshot({ revoked_agents: agents, revoked_grants: grants });
        const claims = pass(sub, aud, revSeq);
        assert.equal(new RevocationIndex(snap).verdict(claims), revocationVerdict(claims, snap));
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses at and below the entry rev_seq, not above; ignores `suspicious`', () => {
    const index = new RevocationIndex(snapshot({
      revoked_agents: [{ id: 'ag_a', flag: 'revoked', rev_seq: 5 }, { id: 'ag_b', flag: 'suspicious', rev_seq: 9 }],
      revoked_grants: [{ agent: 'ag_c', site: 'shop.example', rev_seq: 7 }],
    }));
    assert.equal(index.verdict(pass('ag_a', 'shop.example', 5)), 'agent_revoked');
    assert.equal(index.verdict(pass('ag_a', 'shop.example', 6)), null);
    assert.equal(index.verdict(pass('ag_b', 'shop.example', 1)), null);
    assert.equal(index.verdict(pass('ag_c', 'shop.example', 7)), 'grant_revoked');
    assert.equal(index.verdict(pass('ag_c', 'news.example', 1)), null);
    assert.equal(index.revSeq, 20);
  });

  it('is not changed by later changes to the snapshot object', () => {
    const snap = snapshot({ revoked_agents: [{ id: 'ag_a', flag: 'revoked', rev_seq: 5 }] });
    const index = new RevocationIndex(snap);
    snap.revoked_agents.length = 0;
    assert.equal(index.verdict(pass('ag_a', 'shop.example', 1)), 'agent_revoked');
  });
});
