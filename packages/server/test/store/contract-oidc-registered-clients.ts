import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { OidcRegisteredClientRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** The storage contract of self-registered clients (RFC 7591, migration 031), on every backend. */
export function oidcRegisteredClientsContract(name: string, open: OpenStore): void {
  describe(`store contract (registered oidc clients): ${name}`, () => {
    const store = useStore(open);

    it('stores every field and reads it back the same; an unknown id is undefined', async () => {
      const full: OidcRegisteredClientRecord = {
        id: uniq('rc_'),
        name: 'Claude Code',
        redirectUris: ['http://127.0.0.1:33418/callback', 'https://app.example/cb?x=1'],
        clientUri: 'https://app.example',
        logoUri: 'https://app.example/logo.png',
        createdAt: 2_000_000_000_123,
      };
      await store.oidcRegisteredClients.create(full);
      assert.deepEqual(await store.oidcRegisteredClients.byId(full.id), full);
      const bare: OidcRegisteredClientRecord = { ...full, id: uniq('rc_'), clientUri: null, logoUri: null };
      await store.oidcRegisteredClients.create(bare);
      assert.deepEqual(await store.oidcRegisteredClients.byId(bare.id), bare);
      assert.equal(await store.oidcRegisteredClients.byId('rc_nobody'), undefined);
    });

    it('refuses a second client with the same id', async () => {
      const c: OidcRegisteredClientRecord = { id: uniq('rc_'), name: 'A', redirectUris: ['https://a.example/cb'], clientUri: null, logoUri: null, createdAt: 1 };
      await store.oidcRegisteredClients.create(c);
      await assert.rejects(store.oidcRegisteredClients.create({ ...c, name: 'B' }));
      assert.equal((await store.oidcRegisteredClients.byId(c.id))?.name, 'A');
    });
  });
}
