import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { OAuthStateRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** The storage contract of identity providers (migration 020): linked identities and single-use flow states, on every backend. */
export function identityProvidersContract(name: string, open: OpenStore): void {
  describe(`store contract (identity providers): ${name}`, () => {
    const store = useStore(open);
    const ISS = 'https://issuer.example';
    const identity = (userId: string, subject = uniq('sub'), provider = 'google') => ({ issuer: ISS, subject, userId, provider, createdAt: 1_000 });
    const state = (over: Partial<OAuthStateRecord> = {}): OAuthStateRecord => ({
      stateHash: uniq('s'), purpose: 'approve', provider: 'google', userId: uniq('u_'), txnId: 't_x', limits: { maxUses: 2 }, browserHash: null,
      nonce: 'n', codeVerifier: 'v', createdAt: 1_000, expiresAt: 2_000, ...over,
    });

    it('links an identity to one account only, and an account to one identity per provider', async () => {
      const ann = uniq('u_');
      const bob = uniq('u_');
      const sub = uniq('sub');
      assert.equal(await store.oauthIdentities.link(identity(ann, sub)), true);
      assert.equal(await store.oauthIdentities.link(identity(bob, sub)), false, 'the identity is taken');
      assert.equal(await store.oauthIdentities.link(identity(ann)), false, 'ann has a Google identity already');
      assert.equal(await store.oauthIdentities.link(identity(ann, undefined, 'microsoft')), true, 'another provider is fine');
      assert.equal((await store.oauthIdentities.byIdentity(ISS, sub))?.userId, ann);
      assert.deepEqual((await store.oauthIdentities.listForUser(ann)).map((i) => i.provider).sort(), ['google', 'microsoft']);
      assert.deepEqual(await store.oauthIdentities.listForUser(bob), []);
    });

    it('of racing links of one identity, exactly one wins', async () => {
      const sub = uniq('sub');
      const results = await Promise.all(Array.from({ length: 8 }, () => store.oauthIdentities.link(identity(uniq('u_'), sub))));
      assert.equal(results.filter(Boolean).length, 1);
    });

    it('unlinks by provider, and deletes everything of an account', async () => {
      const ann = uniq('u_');
      await store.oauthIdentities.link(identity(ann));
      await store.oauthIdentities.link(identity(ann, undefined, 'microsoft'));
      assert.equal(await store.oauthIdentities.unlink(ann, 'google'), true);
      assert.equal(await store.oauthIdentities.unlink(ann, 'google'), false);
      assert.equal(await store.oauthIdentities.deleteForUser(ann), 1);
      assert.deepEqual(await store.oauthIdentities.listForUser(ann), []);
    });

    it('consumes a state once, unexpired, with what it was bound to', async () => {
      const s = state();
      await store.oauthStates.create(s);
      assert.equal(await store.oauthStates.consume(s.stateHash, 2_000), undefined, 'expired at its expiry');
      const live = state({ browserHash: 'b', limits: null, txnId: null, purpose: 'link' });
      await store.oauthStates.create(live);
      assert.deepEqual(await store.oauthStates.consume(live.stateHash, 1_500), live);
      assert.equal(await store.oauthStates.consume(live.stateHash, 1_500), undefined, 'single-use');
      const withLimits = state();
      await store.oauthStates.create(withLimits);
      assert.deepEqual((await store.oauthStates.consume(withLimits.stateHash, 1_500))?.limits, { maxUses: 2 });
    });

    it('of racing consumers of one state, exactly one gets it', async () => {
      const s = state();
      await store.oauthStates.create(s);
      const results = await Promise.all(Array.from({ length: 8 }, () => store.oauthStates.consume(s.stateHash, 1_500)));
      assert.equal(results.filter((r) => r !== undefined).length, 1);
    });

    it('purges expired states and deletes the states of an account', async () => {
      const old = state({ expiresAt: 10 });
      const mine = state({ expiresAt: 10_000_000 });
      await store.oauthStates.create(old);
      await store.oauthStates.create(mine);
      assert.ok((await store.oauthStates.purgeExpired(11)) >= 1);
      assert.equal(await store.oauthStates.consume(old.stateHash, 5), undefined, 'purged');
      assert.equal(await store.oauthStates.deleteForUser(mine.userId ?? ''), 1);
      assert.equal(await store.oauthStates.consume(mine.stateHash, 1_500), undefined);
    });
  });
}
