import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { OidcClientRecord } from '../../src/store/ports/index.ts';
import { oidcSignInsContract } from './contract-oidc-sign-ins.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** The storage contract of OIDC clients, on every backend. */
export function oidcContract(name: string, open: OpenStore): void {
  oidcSignInsContract(name, open);
  describe(`store contract (oidc clients): ${name}`, () => {
    const store = useStore(open);

    const client = (over: Partial<OidcClientRecord> = {}): OidcClientRecord => ({
      id: uniq('c_'),
      userId: uniq('u_'),
      name: 'Shop',
      redirectUris: ['https://shop.example/cb', 'http://localhost:3000/cb'],
      backchannelLogoutUri: null,
      isPublic: false,
      secretHash: 'a'.repeat(64),
      secretSetAt: 10,
      verificationToken: uniq('tok'),
      verifiedOrigins: [],
      verifiedAt: null,
      createdAt: 10,
      updatedAt: 10,
      ...over,
    });

    it('stores every field and reads it back the same', async () => {
      const c = client({ backchannelLogoutUri: 'https://shop.example/logout', verifiedOrigins: ['https://shop.example'], verifiedAt: 2_000_000_000_123 });
      await store.oidcClients.create(c);
      assert.deepEqual(await store.oidcClients.byId(c.id), c);
      const pub = client({ isPublic: true, secretHash: null, secretSetAt: null });
      await store.oidcClients.create(pub);
      assert.deepEqual(await store.oidcClients.byId(pub.id), pub);
      assert.equal(await store.oidcClients.byId('c_nobody'), undefined);
    });

    it('lists and counts per owner, oldest first', async () => {
      const userId = uniq('u_');
      const later = client({ userId, createdAt: 30 });
      const earlier = client({ userId, createdAt: 20 });
      await store.oidcClients.create(later);
      await store.oidcClients.create(earlier);
      await store.oidcClients.create(client());
      assert.deepEqual((await store.oidcClients.listForUser(userId)).map((c) => c.id), [earlier.id, later.id]);
      assert.equal(await store.oidcClients.countForUser(userId), 2);
      assert.equal(await store.oidcClients.countForUser(uniq('u_')), 0);
    });

    it('updates only while the redirect URIs are the ones expected, and only for the owner', async () => {
      const c = client();
      await store.oidcClients.create(c);
      assert.equal(await store.oidcClients.update('u_other', c.id, { name: 'Stolen' }, c.redirectUris), undefined);
      assert.equal(await store.oidcClients.update(c.userId, c.id, { name: 'Stale' }, ['https://old.example/cb']), undefined);
      const renamed = await store.oidcClients.update(c.userId, c.id, { name: 'Shop 2', backchannelLogoutUri: 'https://shop.example/bcl', updatedAt: 50 }, c.redirectUris);
      assert.equal(renamed?.name, 'Shop 2');
      assert.equal(renamed?.backchannelLogoutUri, 'https://shop.example/bcl');
      assert.equal(renamed?.updatedAt, 50);
      assert.deepEqual(renamed?.redirectUris, c.redirectUris, 'fields not named stay');
      const moved = await store.oidcClients.update(c.userId, c.id, { redirectUris: ['https://new.example/cb'], verifiedOrigins: [], verifiedAt: null, backchannelLogoutUri: null }, c.redirectUris);
      assert.deepEqual(moved?.redirectUris, ['https://new.example/cb']);
      assert.equal(moved?.backchannelLogoutUri, null);
      // A verification that fetched the old URIs' files loses.
      assert.equal(await store.oidcClients.update(c.userId, c.id, { verifiedOrigins: ['https://shop.example'], verifiedAt: 60 }, c.redirectUris), undefined);
      const verified = await store.oidcClients.update(c.userId, c.id, { verifiedOrigins: ['https://new.example'], verifiedAt: 60 }, ['https://new.example/cb']);
      assert.deepEqual(verified?.verifiedOrigins, ['https://new.example']);
      assert.equal(verified?.verifiedAt, 60);
      assert.equal(verified?.name, 'Shop 2');
      assert.ok(await store.oidcClients.update(c.userId, c.id, {}, ['https://new.example/cb']), 'an empty change answers whether the check holds');
    });

    it('of racing edits from the same read, exactly one wins', async () => {
      const c = client();
      await store.oidcClients.create(c);
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.oidcClients.update(c.userId, c.id, { redirectUris: [`https://s${i}.example/cb`] }, c.redirectUris)));
      assert.equal(results.filter((r) => r !== undefined).length, 1);
    });

    it('replaces the secret of a confidential client only, for its owner', async () => {
      const c = client();
      const pub = client({ isPublic: true, secretHash: null, secretSetAt: null });
      await store.oidcClients.create(c);
      await store.oidcClients.create(pub);
      assert.equal(await store.oidcClients.replaceSecret('u_other', c.id, 'b'.repeat(64), 70), false);
      assert.equal(await store.oidcClients.replaceSecret(pub.userId, pub.id, 'b'.repeat(64), 70), false);
      assert.equal((await store.oidcClients.byId(pub.id))?.secretHash, null);
      assert.equal(await store.oidcClients.replaceSecret(c.userId, c.id, 'b'.repeat(64), 70), true);
      const after = await store.oidcClients.byId(c.id);
      assert.equal(after?.secretHash, 'b'.repeat(64));
      assert.equal(after?.secretSetAt, 70);
      assert.equal(after?.updatedAt, 70);
    });

    it('deletes for the owner only', async () => {
      const c = client();
      await store.oidcClients.create(c);
      assert.equal(await store.oidcClients.delete('u_other', c.id), false);
      assert.equal(await store.oidcClients.delete(c.userId, c.id), true);
      assert.equal(await store.oidcClients.delete(c.userId, c.id), false);
      assert.equal(await store.oidcClients.byId(c.id), undefined);
    });

    it('works inside a transaction, and a rollback leaves nothing', async () => {
      const c = client();
      await assert.rejects(store.transaction(async (repos) => {
        await repos.oidcClients.create(c);
        assert.ok(await repos.oidcClients.byId(c.id));
        throw new Error('roll back');
      }), /roll back/);
      assert.equal(await store.oidcClients.byId(c.id), undefined);
    });
  });
}
