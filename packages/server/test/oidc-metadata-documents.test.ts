import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FixedClock } from '../src/clock.ts';
import { RateLimiter } from '../src/domain/rate-limit.ts';
import { FETCHES_PER_HOST_PER_MINUTE, MetadataDocuments, REFUSAL_KEPT_SEC, cacheSeconds } from '../src/domain/oidc/metadata-documents.ts';
import { OAuthError } from '../src/domain/oidc/oauth-error.ts';
import { guardedFetch } from '../src/outbound/guarded-fetch.ts';
import type { OutboundPolicy } from '../src/outbound/types.ts';
import { openSqliteStore } from '../src/store/sqlite/open.ts';
import type { Store } from '../src/store/ports/index.ts';
import { MetadataDocumentSite } from './helpers/stand-ins/metadata-documents.ts';

// Client ID Metadata Documents (decisions §28) fetched through the real outbound guard (§24) from a
// local server: what is accepted, how long it is kept, and every refusal.

const LOOPBACK: OutboundPolicy = { allowLoopback: true };

describe('client metadata documents through the outbound guard', () => {
  let site: MetadataDocumentSite;
  let store: Store;
  let dir: string;
  let clock: FixedClock;

  const documents = (policy = LOOPBACK, options: Parameters<typeof guardedFetch>[1] = { timeoutMs: 500 }) =>
    new MetadataDocuments({ clock, limiter: new RateLimiter(store.rateCounters, clock), fetch: guardedFetch(policy, options), policy });

  let n = 0;
  /** Serves a valid document at a fresh path, with `over` merged in; answers its URL. */
  const publish = (over: Record<string, unknown> = {}, headers: Record<string, string> = {}): { url: string; path: string } => {
    const path = `/clients/${++n}.json`;
    const url = `${site.origin}${path}`;
    site.serve(path, { body: { client_id: url, client_name: 'Claude', redirect_uris: ['https://claude.example/api/mcp/auth_callback', 'http://127.0.0.1:33418/callback'], token_endpoint_auth_method: 'none', ...over }, headers });
    return { url, path };
  };

  const refusedWith = async (p: Promise<unknown>, pattern: RegExp) => {
    await assert.rejects(p, (e: unknown) => {
      assert.ok(e instanceof OAuthError, String(e));
      assert.equal(e.error, 'invalid_client');
      assert.equal(e.status, 401);
      assert.match(e.detail, pattern);
      return true;
    });
  };

  before(async () => {
    site = await new MetadataDocumentSite().start();
    dir = mkdtempSync(join(tmpdir(), 'mandate-cimd-'));
    store = await openSqliteStore(dir);
    clock = new FixedClock(Date.now());
  });
  after(async () => {
    await site.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(site.problems, []);
  });

  it('accepts a valid document as a public client and keeps it: the second look-up fetches nothing', async () => {
    const docs = documents();
    const { url, path } = publish({ client_uri: 'https://claude.example', logo_uri: 'https://claude.example/logo.png', scope: 'openid', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] });
    const client = await docs.client(url);
    assert.deepEqual(client, {
      id: url, kind: 'metadata_document', isPublic: true, verifiedOrigins: [], name: 'Claude',
      redirectUris: ['https://claude.example/api/mcp/auth_callback', 'http://127.0.0.1:33418/callback'],
      clientUri: 'https://claude.example', logoUri: 'https://claude.example/logo.png',
    });
    assert.deepEqual(await docs.client(url), client);
    assert.equal(site.count(path), 1);
  });

  it('an absent token_endpoint_auth_method means none', async () => {
    const { url } = publish({ token_endpoint_auth_method: undefined });
    assert.equal((await documents().client(url)).isPublic, true);
  });

  it('concurrent look-ups of one document share one fetch', async () => {
    const docs = documents();
    const { url, path } = publish();
    const all = await Promise.all([docs.client(url), docs.client(url), docs.client(url)]);
    assert.ok(all.every((c) => c.id === url));
    assert.equal(site.count(path), 1);
  });

  it('honours max-age: kept until it passes, fetched again after', async () => {
    const docs = documents();
    const { url, path } = publish({}, { 'cache-control': 'public, max-age=120' });
    await docs.client(url);
    clock.advance(119_000);
    await docs.client(url);
    assert.equal(site.count(path), 1);
    clock.advance(2_000);
    await docs.client(url);
    assert.equal(site.count(path), 2);
  });

  it('clamps: a max-age under 60 s is kept 60 s, no-store too, one over a day is kept a day', async () => {
    const docs = documents();
    for (const cc of ['max-age=5', 'no-store']) {
      const { url, path } = publish({}, { 'cache-control': cc });
      await docs.client(url);
      clock.advance(59_000);
      await docs.client(url);
      assert.equal(site.count(path), 1, cc);
      clock.advance(2_000);
      await docs.client(url);
      assert.equal(site.count(path), 2, cc);
    }
    const { url, path } = publish({}, { 'cache-control': 'max-age=31536000' });
    await docs.client(url);
    clock.advance(24 * 3600_000 - 1000);
    await docs.client(url);
    assert.equal(site.count(path), 1);
    clock.advance(2000);
    await docs.client(url);
    assert.equal(site.count(path), 2);
  });

  it('reads Cache-Control as documented', () => {
    assert.equal(cacheSeconds(undefined), 300);
    assert.equal(cacheSeconds('public'), 300);
    assert.equal(cacheSeconds('max-age=600'), 600);
    assert.equal(cacheSeconds('Public, MAX-AGE=7200'), 7200);
    assert.equal(cacheSeconds('max-age=0'), 60);
    assert.equal(cacheSeconds('no-cache, max-age=600'), 60);
    assert.equal(cacheSeconds('max-age=99999999999'), 86400);
    assert.equal(cacheSeconds('max-age=-5'), 300);
  });

  it('refuses a document that does not name itself, or is not JSON, or not an object', async () => {
    const docs = documents();
    await refusedWith(docs.client(publish({ client_id: 'https://other.example/client.json' }).url), /client_id.*equal to its own URL/);
    const { url } = publish();
    site.serve(new URL(url).pathname, { body: '<html>hello</html>' });
    await refusedWith(docs.client(url), /is not JSON/);
    site.serve('/array.json', { body: [1, 2] });
    await refusedWith(docs.client(`${site.origin}/array.json`), /client_id/);
  });

  it('refuses a document that is too big (over 32 kB), and one over the guard cap', async () => {
    const docs = documents();
    await refusedWith(docs.client(publish({ padding: 'x'.repeat(40_000) }).url), /40\d{3} bytes; at most 32768/);
    await refusedWith(docs.client(publish({ padding: 'x'.repeat(100_000) }).url), /larger than 65536 bytes/);
  });

  it('refuses a document that is too slow (the guard\'s deadline)', async () => {
    const { url, path } = publish();
    site.serve(path, { body: { client_id: url, client_name: 'Slow', redirect_uris: ['https://slow.example/cb'] }, delayMs: 1500 });
    await refusedWith(documents().client(url), /did not answer within 500 ms/);
  });

  it('refuses a redirect, a 404, and does not follow the redirect', async () => {
    const docs = documents();
    const { path: target } = publish();
    site.serve('/moved.json', { status: 302, body: '', headers: { location: `${site.origin}${target}` } });
    await refusedWith(docs.client(`${site.origin}/moved.json`), /answered 302, a redirect/);
    assert.equal(site.count(target), 0);
    await refusedWith(docs.client(`${site.origin}/nothing-here.json`), /answered 404/);
  });

  it('refuses bad redirect_uris, a missing client_name, a secret, a non-none auth method, other grant types', async () => {
    const docs = documents();
    await refusedWith(docs.client(publish({ redirect_uris: ['http://claude.example/cb'] }).url), /redirect_uris\[0\] must be an https: URL/);
    await refusedWith(docs.client(publish({ redirect_uris: [] }).url), /redirect_uris must hold 1 to 10/);
    await refusedWith(docs.client(publish({ redirect_uris: ['https://claude.example/*'] }).url), /wildcards/);
    await refusedWith(docs.client(publish({ redirect_uris: 'https://claude.example/cb' }).url), /redirect_uris must be an array/);
    await refusedWith(docs.client(publish({ client_name: undefined }).url), /client_name is required/);
    await refusedWith(docs.client(publish({ client_name: 'Cl\u202eaude' }).url), /client_name/);
    await refusedWith(docs.client(publish({ client_secret: 's3cret' }).url), /must not hold a client_secret/);
    await refusedWith(docs.client(publish({ token_endpoint_auth_method: 'client_secret_basic' }).url), /token_endpoint_auth_method must be "none"/);
    await refusedWith(docs.client(publish({ token_endpoint_auth_method: 'private_key_jwt' }).url), /token_endpoint_auth_method must be "none"/);
    await refusedWith(docs.client(publish({ grant_types: ['client_credentials'] }).url), /grant_types/);
    await refusedWith(docs.client(publish({ logo_uri: 'javascript:alert(1)' }).url), /logo_uri must be an https: URL/);
  });

  it('keeps a refusal 60 s: asking again within it fetches nothing; a corrected document works after it', async () => {
    const docs = documents();
    const { url, path } = publish({ redirect_uris: ['ftp://x.example/cb'] });
    await refusedWith(docs.client(url), /redirect_uris/);
    site.serve(path, { body: { client_id: url, client_name: 'Fixed', redirect_uris: ['https://x.example/cb'] } });
    await refusedWith(docs.client(url, '198.51.100.7'), /redirect_uris/);
    assert.equal(site.count(path), 1, 'the refusal was kept: nothing fetched');
    clock.advance(REFUSAL_KEPT_SEC * 1000 + 1);
    assert.equal((await docs.client(url)).name, 'Fixed');
    assert.equal(site.count(path), 2);
  });

  it('refuses client_id URLs the draft forbids without fetching them', async () => {
    const docs = documents();
    const before = [...site.fetches.values()].reduce((a, b) => a + b, 0);
    await refusedWith(docs.client(`${site.origin}`), /must have a path/);
    await refusedWith(docs.client(`${site.origin}/`), /must have a path/);
    await refusedWith(docs.client(`${site.origin}/a.json#frag`), /fragment/);
    await refusedWith(docs.client(`${site.origin}/x/../a.json`), /\. or \.\. path segments/);
    await refusedWith(docs.client(`${site.origin}/x/%2e%2e/a.json`), /\. or \.\. path segments/);
    await refusedWith(docs.client(site.origin.replace('http://', 'http://user:pw@') + '/a.json'), /user name or password/);
    await refusedWith(docs.client('http://client.example/client.json'), /must be https: \(http: only on a loopback host/);
    assert.equal([...site.fetches.values()].reduce((a, b) => a + b, 0), before);
  });

  it('without OUTBOUND_ALLOW_LOOPBACK: http:, loopback and private addresses are refused, nothing fetched', async () => {
    const strict: OutboundPolicy = { allowLoopback: false };
    const { url, path } = publish();
    const docs = documents(strict);
    await refusedWith(docs.client(url), /must be an https: URL/);
    await refusedWith(docs.client(url.replace('http://', 'https://')), /public address/);
    await refusedWith(docs.client('https://localhost/client.json'), /public address/);
    await refusedWith(docs.client('https://[::1]/client.json'), /public address/);
    // A public-looking name that resolves to a private address: refused by the guard's DNS check.
    const lying = documents(strict, { resolveHost: async () => [{ address: '10.1.2.3', family: 4 }] });
    await refusedWith(lying.client('https://client.example/client.json'), /could not be fetched: .*not allowed/);
    assert.equal(site.count(path), 0);
  });

  it('limits fetches of new documents per host and caller: the 31st of one caller within a minute is 429, and is not fetched', async () => {
    const docs = documents();
    const paths: string[] = [];
    let refused: unknown;
    let tries = 0;
    for (let i = 0; i < 40 && refused === undefined; i++) {
      const { url, path } = publish({ redirect_uris: 'not-an-array' });
      paths.push(path);
      tries++;
      try {
        await docs.client(url, '203.0.113.5');
      } catch (e) {
        if (!(e instanceof OAuthError)) refused = e;
      }
    }
    assert.ok(refused !== undefined, 'rate limited at some point');
    assert.equal(tries, FETCHES_PER_HOST_PER_MINUTE + 1);
    assert.equal((refused as { status?: number }).status, 429);
    assert.equal(site.count(paths[paths.length - 1] ?? ''), 0);
    clock.advance(61_000);
  });

  it('made-up client_id URLs on a host cannot lock out its real clients: other callers, and documents accepted before, are still fetched', async () => {
    const docs = documents();
    const real = publish({}, { 'cache-control': 'max-age=60' });
    assert.equal((await docs.client(real.url, '192.0.2.10')).name, 'Claude');
    // An attacker (one address, then a /64 whose addresses all count as one) exhausts its allowance on the host.
    for (const attacker of ['203.0.113.9', '2001:db8:1:2::1', '2001:db8:1:2::2']) {
      for (let i = 0; i < FETCHES_PER_HOST_PER_MINUTE + 5; i++) {
        await docs.client(`${site.origin}/made-up/${attacker}/${i}.json`, attacker).catch(() => undefined);
      }
    }
    const attackerFetches = [...site.fetches.entries()].filter(([p]) => p.startsWith('/made-up/')).reduce((a, [, c]) => a + c, 0);
    assert.equal(attackerFetches, FETCHES_PER_HOST_PER_MINUTE * 2, 'an IPv4 address and an IPv6 /64 each got their allowance, no more');
    await assert.rejects(docs.client(`${site.origin}/made-up/one-more.json`, '2001:db8:1:2::ffff'), (e: unknown) => (e as { status?: number }).status === 429);
    // Another caller fetches a document new to the service; the real client's expired copy is fetched again.
    const other = publish();
    assert.equal((await docs.client(other.url, '192.0.2.11')).name, 'Claude');
    clock.advance(61_000);
    assert.equal((await docs.client(real.url, '203.0.113.9')).name, 'Claude', 'known good: not counted against the host');
    assert.equal(site.count(real.path), 2);
    clock.advance(61_000);
  });
});
