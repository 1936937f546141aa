import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { publicUrl } from '../src/public-url.ts';
import { createVerifier, type MandateRequest, type Verifier, type VerifierOptions } from '../src/index.ts';
import { jwksOf, revocationClaims, serviceKey, snapshotAnswer, startStub, stubAgent, stubRequest, type ServiceKey, type Stub } from './helpers/stub-service.ts';

// The URL a DPoP proof must sign: the configured public base address plus the request path;
// forwarded headers only when enabled and no base address is set.

const req = (url: string, headers: Record<string, string> = {}, secure?: boolean): MandateRequest => ({
  method: 'GET',
  url,
  headers: { host: 'internal:8080', ...headers },
  ...(secure === undefined ? {} : { secure }),
});
const forwardedHeaders = { 'x-forwarded-host': 'shop.example', 'x-forwarded-proto': 'https' };
const build = (r: MandateRequest, o: { base?: string; trust?: boolean } = {}) =>
  publicUrl(r, { publicBaseUrl: o.base, trustForwardedHeaders: o.trust ?? false });

describe('public URL rebuilding', () => {
  it('a base address plus the path (and query) as received; forwarded headers ignored', () => {
    assert.deepEqual(build(req('/orders?page=2', forwardedHeaders), { base: 'https://shop.example' }), { ok: true, url: 'https://shop.example/orders?page=2' });
    assert.deepEqual(build(req('/orders', forwardedHeaders), { base: 'https://shop.example', trust: true }), { ok: true, url: 'https://shop.example/orders' }, 'the base wins over trusted headers');
    assert.deepEqual(build(req('/orders'), { base: 'https://example.com/shop' }), { ok: true, url: 'https://example.com/shop/orders' }, 'a path prefix is kept');
    assert.deepEqual(build(req('//evil.example/x'), { base: 'https://shop.example' }), { ok: true, url: 'https://shop.example//evil.example/x' }, 'a path never becomes a host');
    assert.deepEqual(build(req('http://whatever/orders?x=1'), { base: 'https://shop.example' }), { ok: true, url: 'https://shop.example/orders?x=1' }, 'absolute-form target: its path');
  });

  it('no base: the Host header; forwarded headers ignored by default', () => {
    assert.deepEqual(build(req('/orders', forwardedHeaders)), { ok: true, url: 'http://internal:8080/orders' });
    assert.deepEqual(build(req('/orders', {}, true)), { ok: true, url: 'https://internal:8080/orders' }, 'TLS on this process');
  });

  it('no base and trustForwardedHeaders: X-Forwarded-Host and -Proto, first value of each', () => {
    assert.deepEqual(build(req('/orders', forwardedHeaders), { trust: true }), { ok: true, url: 'https://shop.example/orders' });
    assert.deepEqual(build(req('/orders', { 'x-forwarded-host': 'shop.example, proxy.internal', 'x-forwarded-proto': 'https,http' }), { trust: true }), { ok: true, url: 'https://shop.example/orders' });
    assert.deepEqual(build(req('/orders', { 'x-forwarded-proto': 'https' }), { trust: true }), { ok: true, url: 'https://internal:8080/orders' }, 'each header falls back alone');
  });

  it('refuses what cannot be a URL of this site', () => {
    for (const [r, o] of [
      [req('*'), {}],
      [req('orders'), {}],
      [{ method: 'GET', url: '/orders', headers: {} }, {}],
      [req('/orders', { host: 'evil.example/x' }), {}],
      [req('/orders', { host: 'user@evil.example' }), {}],
      [req('/orders', { 'x-forwarded-proto': 'javascript' }), { trust: true }],
      [req('/orders', { 'x-forwarded-host': 'a b' }), { trust: true }],
      [req(`/${'a'.repeat(9000)}`), { base: 'https://shop.example' }],
    ] as const) {
      assert.equal(build(r as MandateRequest, o).ok, false, JSON.stringify(r).slice(0, 120));
    }
  });
});

describe('public URL rebuilding, through verify', () => {
  let stub: Stub;
  let key: ServiceKey;
  const verifiers: Verifier[] = [];
  const nowSec = Math.floor(Date.UTC(2026, 10, 22, 12) / 1000);

  before(async () => {
    stub = await startStub();
    key = await serviceKey('k1');
    stub.routes.set('/api/v1/jwks', jwksOf(key));
    stub.routes.set('/api/v1/revocation', await snapshotAnswer(key, revocationClaims(stub.url, nowSec, 1)));
  });
  after(async () => {
    for (const v of verifiers) v.close();
    await stub.close();
  });

  const verifier = (o: Partial<VerifierOptions>) => {
    const v = createVerifier({ mode: 'local', serviceUrl: stub.url, site: 'shop.example', now: () => nowSec * 1000, onError: () => {}, ...o });
    verifiers.push(v);
    return v;
  };

  it('a proof for the public address verifies behind a proxy only when the site knows that address', async () => {
    const agent = await stubAgent();
    const viaProxy = async () => {
      const r = await stubRequest(key, agent, { issuer: stub.url, site: 'shop.example', base: 'https://shop.example', nowSec });
      return { ...r, headers: { ...r.headers, host: 'internal:8080', ...forwardedHeaders } };
    };
    const error = (r: Awaited<ReturnType<Verifier['verify']>>) => (r.ok ? 'ok' : r.error);
    assert.equal(error(await verifier({ publicBaseUrl: 'https://shop.example' }).verify(await viaProxy())), 'ok');
    assert.equal(error(await verifier({ trustForwardedHeaders: true }).verify(await viaProxy())), 'ok');
    assert.equal(error(await verifier({}).verify(await viaProxy())), 'dpop_url_mismatch', 'forwarded headers are not trusted by default');
    assert.equal(error(await verifier({}).verify({ ...(await viaProxy()), headers: {} })), 'invalid_request', 'no Host at all');
  });

  it('rejects bad options at creation', () => {
    const base = { mode: 'local' as const, serviceUrl: stub.url, site: 'shop.example' };
    assert.throws(() => createVerifier({ ...base, publicBaseUrl: 'shop.example' }), /publicBaseUrl is not a URL/);
    assert.throws(() => createVerifier({ ...base, publicBaseUrl: 'https://shop.example/?x=1' }), /publicBaseUrl must not carry a query/);
    assert.throws(() => createVerifier({ ...base, serviceUrl: 'ftp://mandate' }), /serviceUrl must be an http or https URL/);
    assert.throws(() => createVerifier({ ...base, site: 'https://shop.example' }), /site must be your host name/);
    assert.throws(() => createVerifier({ ...base, maxStaleSec: 10 }), /maxStaleSec must be at least revTtlSec/);
    assert.throws(() => createVerifier({ ...base, mode: 'remote' as 'local' }), /mode must be/);
  });
});
