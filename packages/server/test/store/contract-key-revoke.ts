import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { SigningKeyRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const key = (createdAt: number, retiredAt: number | null = null): SigningKeyRecord => ({
  kid: `kid-${Date.now().toString(36)}-${(n++).toString(36)}`,
  publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' },
  privateJwk: '{"d":"secret"}',
  encrypted: false,
  createdAt,
  retiredAt,
});

/** Dropping signing keys at once ("revoke now" rotation), on every backend. */
export function keyRevokeContract(name: string, open: OpenStore): void {
  describe(`store contract (signing keys revoked at once): ${name}`, () => {
    const store = useStore(open);

    it('deletes every key but the kept one created up to its time, current or retired, and answers their kids', async () => {
      const retired = key(1_000, 2_000);
      const current = key(2_000);
      const same = key(5_000);
      const kept = key(5_000);
      const later = key(6_000);
      for (const k of [retired, current, same, kept, later]) await store.signingKeys.create(k);
      const dropped = await store.signingKeys.dropOlder(kept.kid, kept.createdAt);
      assert.deepEqual([...dropped].sort(), [retired.kid, current.kid, same.kid].sort());
      assert.deepEqual((await store.signingKeys.list()).map((k) => k.kid).sort(), [kept.kid, later.kid].sort(), 'a key created later (by another node) stays');
      assert.deepEqual(await store.signingKeys.dropOlder(kept.kid, kept.createdAt), [], 'nothing left to drop');
    });
  });
}
