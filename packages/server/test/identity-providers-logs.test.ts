import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config/config.ts';
import { openSqliteStore } from '../src/store/sqlite/open.ts';
import type { Store } from '../src/store/ports/index.ts';
import { signUp } from './helpers/app.ts';
import type { Config } from '../src/config/config.ts';
import type { Built } from '../src/app.ts';
import { deliver, landing, setCookies, startFlow } from './helpers/identity-flow.ts';
import { startIdentityProviderStandIn, type IdentityProviderStandIn } from './helpers/stand-ins/identity-provider.ts';

// The identity-provider flows leave no secret in the log at the most talkative level: not the
// callback's code and state (they ride in the URL, which request logs carry), not the flow cookie,
// not the client secret, not the session made.

describe('identity-provider flows in the log', () => {
  const lines: string[] = [];
  let dir: string;
  let store: Store;
  let google: IdentityProviderStandIn;
  let t: Built & { config: Config };

  before(async () => {
    google = await startIdentityProviderStandIn({ redirectUris: ['http://localhost:8080/api/oauth/google/callback'] });
    dir = mkdtempSync(join(tmpdir(), 'mandate-idp-logs-'));
    store = await openSqliteStore(dir);
    const config = parseConfig({ BASE_URL: 'http://localhost:8080', DATA_DIR: dir, LOG_LEVEL: 'trace', OUTBOUND_ALLOW_LOOPBACK: 'true', OAUTH_PROVIDERS: 'google', ...google.env('google') });
    const logStream = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
    const built = await buildApp({ config, store, logStream });
    t = { ...built, config };
  });
  after(async () => {
    await t.app.close();
    await store.close();
    await google.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('never carries the code, state, flow cookie, client secret or session', async () => {
    const owner = await signUp(t.app);
    google.signInAs({ sub: 'logged-person' });
    const link = await startFlow(t, 'google', owner.auth);
    assert.equal(landing(await deliver(t, link.callback, link, owner.auth)).oauth, 'linked');
    const signIn = await startFlow(t, 'google');
    const res = await deliver(t, signIn.callback, signIn);
    const secrets = [google.clientSecret, link.callback.searchParams.get('code'), link.callback.searchParams.get('state'), signIn.callback.searchParams.get('code'), signIn.callback.searchParams.get('state'), link.cookie, signIn.cookie, setCookies(res)['session']];
    const log = lines.join('');
    assert.match(log, /\/api\/oauth\/google\/callback\?code=\[redacted\]&state=\[redacted\]/, 'the callback was logged, redacted');
    for (const secret of secrets) {
      assert.ok(secret, 'each secret was seen');
      assert.equal(log.includes(secret), false, `a secret reached the log: ${secret.slice(0, 6)}...`);
    }
  });
});
