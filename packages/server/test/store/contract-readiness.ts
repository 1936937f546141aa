import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { OidcClientRecord, OperatorRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** The readiness check's storage (decisions §22): the shared 10-minute cache, and what is registered for a host. */
export function readinessContract(name: string, open: OpenStore): void {
  describe(`store contract (readiness): ${name}`, () => {
    const store = useStore(open);

    const client = (redirectUris: string[], createdAt = 1000): OidcClientRecord => ({
      id: uniq('c_'), userId: uniq('u_'), name: 'Shop', redirectUris, backchannelLogoutUri: null, isPublic: true, secretHash: null, secretSetAt: null,
      verificationToken: 'tok', verifiedOrigins: [], verifiedAt: null, createdAt, updatedAt: createdAt,
    });
    const operator = (domain: string): OperatorRecord => ({
      id: uniq('op_'), userId: uniq('u_'), name: 'Acme', domain, redirectUris: [`https://${domain}/cb`], browser: 'operator', secretHash: 'h', secretSetAt: 1000,
      status: 'pending', verificationToken: 'tok', verifiedAt: null, statusChangedAt: null, createdAt: 1000, updatedAt: 1000,
    });

    it('keeps one check per site until it expires; a new check replaces it; the purge deletes expired ones only', async () => {
      const site = `${uniq('s')}.example`;
      assert.equal(await store.readiness.fresh(site, 1000), undefined);
      await store.readiness.save({ site, report: '{"a":1}', checkedAt: 1000, expiresAt: 601_000 });
      assert.deepEqual(await store.readiness.fresh(site, 600_999), { site, report: '{"a":1}', checkedAt: 1000, expiresAt: 601_000 });
      assert.equal(await store.readiness.fresh(site, 601_000), undefined, 'expired at expiresAt');
      await store.readiness.save({ site, report: '{"a":2}', checkedAt: 700_000, expiresAt: 1_300_000 });
      assert.equal((await store.readiness.fresh(site, 700_000))?.report, '{"a":2}');
      const other = `${uniq('s')}.example`;
      await store.readiness.save({ site: other, report: '{}', checkedAt: 1000, expiresAt: 2000 });
      assert.equal(await store.readiness.purgeExpired(1_299_999), 1);
      assert.ok(await store.readiness.fresh(site, 1_299_999));
    });

    it("finds every owner's OIDC clients with a redirect URI on a host, exactly (not a longer host, another port, or a path)", async () => {
      const host = `${uniq('h')}.example`;
      const a = client([`https://${host}/cb`], 1000);
      const b = client([`https://other.example/cb`, `https://${host.toUpperCase()}:443/cb2`], 2000);
      const c = client([`https://${host}.evil.example/cb`, `https://evil.example/${host}`, `https://${host}:8443/cb`]);
      const d = client([`http://127.0.0.1:4000/cb`]);
      for (const x of [a, b, c, d]) await store.oidcClients.create(x);
      assert.deepEqual((await store.oidcClients.listForHost(host, 10)).map((x) => x.id), [a.id, b.id]);
      assert.deepEqual((await store.oidcClients.listForHost(host, 1)).map((x) => x.id), [a.id]);
      assert.deepEqual((await store.oidcClients.listForHost(`${host}:8443`, 10)).map((x) => x.id), [c.id]);
      assert.deepEqual((await store.oidcClients.listForHost('127.0.0.1:4000', 10)).map((x) => x.id), [d.id]);
      assert.deepEqual(await store.oidcClients.listForHost(`x${host}`, 10), []);
    });

    it('finds the operators whose domain is exactly a host', async () => {
      const host = `${uniq('h')}.example`;
      const o = operator(host);
      await store.operators.create(o);
      await store.operators.create(operator(`${host}:8443`));
      assert.deepEqual((await store.operators.listForDomain(host)).map((x) => x.id), [o.id]);
      assert.deepEqual(await store.operators.listForDomain(`a${host}`), []);
    });
  });
}
