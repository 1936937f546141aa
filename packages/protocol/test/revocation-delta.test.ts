import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { RevocationDeltaClaims } from '../src/index.ts';
import { ProtocolError, applyRevocationDelta, revocationVerdict, signRevocationDelta, signRevocationSnapshot, verifyRevocationDelta } from '../src/index.ts';
import type { Service } from './helpers.ts';
import { ISSUER, KID, NOW, newService, rejectsWith, revocationClaims } from './helpers.ts';

let svc: Service;
before(async () => {
  svc = await newService();
});

const none = { revoked_agents: [], revoked_grants: [] };
const delta = (over: Partial<RevocationDeltaClaims> = {}): RevocationDeltaClaims => ({
  type: 'revocation-delta', iss: ISSUER, iat: NOW, rev_seq: 8, prev_seq: 7, added: none, removed: none, ...over,
});

describe('revocation deltas (decisions §30)', () => {
  it('a signed delta verifies; its content is what was signed', async () => {
    const d = delta({ added: { revoked_agents: [{ id: 'ag_1', flag: 'revoked', rev_seq: 8 }], revoked_grants: [] } });
    assert.deepEqual(await verifyRevocationDelta(await signRevocationDelta(svc.privateKey, KID, d), { keys: svc.resolver, issuer: ISSUER, now: NOW }), d);
  });

  it('a snapshot is not a delta, nor a delta from another issuer, nor one whose prev_seq does not precede rev_seq', async () => {
    const o = { keys: svc.resolver, issuer: ISSUER, now: NOW };
    await rejectsWith(verifyRevocationDelta(await signRevocationSnapshot(svc.privateKey, KID, revocationClaims()), o), 'invalid_token');
    await rejectsWith(verifyRevocationDelta(await signRevocationDelta(svc.privateKey, KID, delta({ iss: 'https://evil.example' })), o), 'invalid_token');
    await rejectsWith(verifyRevocationDelta(await signRevocationDelta(svc.privateKey, KID, delta({ prev_seq: 8 })), o), 'invalid_token');
    const malformed = { ...delta(), added: { revoked_agents: [{ id: '' }], revoked_grants: [] } } as unknown as RevocationDeltaClaims;
    await rejectsWith(verifyRevocationDelta(await signRevocationDelta(svc.privateKey, KID, malformed), o), 'invalid_token');
    for (const bad of [undefined, 42, '', 'a.b.c']) await rejectsWith(verifyRevocationDelta(bad, o), 'invalid_token');
  });

  it('applied in order: added entries refuse passes, removed ones stop refusing, replacements keep one entry per key', () => {
    const list = revocationClaims({ rev_seq: 7, revoked_agents: [{ id: 'ag_old', flag: 'revoked', rev_seq: 3 }], revoked_grants: [{ agent: 'ag_2', site: 'shop.example', rev_seq: 5 }] });
    const pass = { sub: 'ag_1', aud: 'shop.example', rev_seq: 6 };
    assert.equal(revocationVerdict(pass, list), null);
    const next = applyRevocationDelta(list, delta({
      added: { revoked_agents: [{ id: 'ag_1', flag: 'revoked', rev_seq: 8 }], revoked_grants: [{ agent: 'ag_2', site: 'shop.example', rev_seq: 8 }] },
      removed: { revoked_agents: [{ id: 'ag_old', flag: 'revoked', rev_seq: 3 }], revoked_grants: [] },
    }));
    assert.equal(next.rev_seq, 8);
    assert.equal(revocationVerdict(pass, next), 'agent_revoked');
    assert.deepEqual(next.revoked_agents.map((a) => a.id), ['ag_1']);
    assert.deepEqual(next.revoked_grants, [{ agent: 'ag_2', site: 'shop.example', rev_seq: 8 }]);
    const lifted = applyRevocationDelta(next, delta({ rev_seq: 9, prev_seq: 8, removed: { revoked_agents: [{ id: 'ag_1', flag: 'revoked', rev_seq: 8 }], revoked_grants: [] } }));
    assert.equal(revocationVerdict(pass, lifted), null);
    assert.equal(list.rev_seq, 7, 'the list given is left as it was');
  });

  it('a delta that does not follow the list (a gap) or comes from another issuer is refused: fetch a snapshot', () => {
    const list = revocationClaims({ rev_seq: 7 });
    assert.throws(() => applyRevocationDelta(list, delta({ rev_seq: 10, prev_seq: 9 })), (e: unknown) => e instanceof ProtocolError && e.code === 'invalid_request' && /fetch a snapshot/.test(e.message));
    assert.throws(() => applyRevocationDelta(list, delta({ iss: 'https://other.example' })), ProtocolError);
  });
});
