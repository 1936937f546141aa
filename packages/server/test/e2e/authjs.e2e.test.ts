import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { generateAgentKeyPair } from '@mandate/protocol';
import express from 'express';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { MandateAgent } from '@mandate/agent';
import { backchannelLogout } from '../../../../examples/authjs-site/backchannel-logout.ts';
import { followAuthorize } from '../../../../examples/oidc-agent/follow-authorize.ts';
import { confirmWithOwner } from '../../../../examples/openid-client/ciba.ts';
import * as client from 'openid-client';
import { type Child, REPO_ROOT, runTs } from '../helpers/child-process.ts';
import { GUIDE, registrationAt } from '../helpers/oidc-guide.ts';
import { HttpOwner } from '../helpers/over-http.ts';
import { freePort, startServer, type ServerProcess } from '../helpers/server-process.ts';
import { until } from '../helpers/until.ts';

// Proves docs/sites/oidc.md: the real server, the Auth.js site (examples/authjs-site, @auth/express
// unchanged) and the openid-client site (examples/openid-client) as their own processes, started
// as the guide says. The test plays the owner over HTTP (sign-up, passkey, client registration,
// approving the sign-in card, removing the agent) and the agent: its "browser" is fetch with a
// cookie jar, and it answers Mandate's /oidc/authorize with the SDK's header through the guide's
// examples/oidc-agent/follow-authorize.ts. Both sites are registered with the guide's own "Register"
// example (its site's address replaced), so that the example and the set-ups cannot disagree.

const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const children: Child[] = [];

/** A browser's cookies for one site: sent with every request, updated from every answer; redirects are not followed. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((s) => s.trim());
      const name = pair.slice(0, pair.indexOf('='));
      const value = pair.slice(pair.indexOf('=') + 1);
      const expired = attributes.some((a) => /^max-age=0$/i.test(a) || (/^expires=/i.test(a) && Date.parse(a.slice(8)) <= Date.now()));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }
  /** Another browser with the same cookies (an old cookie kept). */
  copy(): CookieJar {
    const c = new CookieJar();
    for (const [k, v] of this.cookies) c.cookies.set(k, v);
    return c;
  }
}

/** The `sh` block of the guide that runs `file`: the test sets exactly the variables it names, and runs the file as it does. */
function runAsDocumented(file: string, env: Record<string, string>): Child {
  const doc = readFileSync(join(REPO_ROOT, GUIDE), 'utf8');
  const command = `node --import tsx ${file}`;
  const block = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '').find((b) => b.trimEnd().endsWith(command));
  assert.ok(block, `${GUIDE} has a sh block ending with: ${command}`);
  const names = [...block.matchAll(/(?:^|\s)([A-Z][A-Z0-9_]*)=/g)].map((m) => m[1]);
  assert.deepEqual(names.sort(), Object.keys(env).sort(), `the variables ${GUIDE} sets for ${file}`);
  const child = runTs(file, { env });
  children.push(child);
  return child;
}

describe('OIDC sign-in with Auth.js and openid-client sites, end to end', () => {
  let server: ServerProcess;
  let owner: HttpOwner;
  let agentId = '';
  let agent: { signInHeaders(url: string): Promise<Record<string, string>> };
  let authjs: Child;
  let authjsUrl = '';
  let authjsClient = '';
  let authjsCallback = ''; // the redirect URI the guide registers, on the Auth.js site
  let authjsLogout = ''; // and its back-channel logout URI
  let rp: Child;
  let rpUrl = '';
  let rpCallback = ''; // the same, on the openid-client site
  type Me = { user: { name: string }; sub: string; act: { sub: string; name: string }; sid: string; expires: string };
  let first: { jar: CookieJar; me: Me };
  let second: { jar: CookieJar; me: Me };
  let rpJar: CookieJar;
  let rpClient = { id: '', secret: '' };

  const logs = () => [`--- server\n${server?.logs() ?? ''}`, ...children.map((c) => `--- ${c.name}\n${c.output()}`)].join('\n');
  const me = async (jar: CookieJar) => {
    const res = await jar.fetch(`${authjsUrl}/me`);
    return { status: res.status, body: (await res.json()) as Me };
  };

  /** The owner's phone: approves this agent's sign-in card with the passkey once it shows up. */
  const approveSignIn = async (clientId: string) => {
    const card = await until('the sign-in card', async () => (await owner.pending()).find((p) => p.agent_id === agentId), { ms: 15_000, describe: logs });
    assert.equal((card as { sign_in?: { client_id: string } }).sign_in?.client_id, clientId, JSON.stringify(card));
    assert.deepEqual(card.scopes, ['openid', 'profile']);
    await owner.approve(card.id);
  };

  /** Auth.js's sign-in as a browser does it: the CSRF token, then POST /auth/signin/mandate; answers the authorize address. */
  const startAuthjsSignIn = async (jar: CookieJar): Promise<string> => {
    const { csrfToken } = (await (await jar.fetch(`${authjsUrl}/auth/csrf`)).json()) as { csrfToken: string };
    const res = await jar.fetch(`${authjsUrl}/auth/signin/mandate`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrfToken, callbackUrl: `${authjsUrl}/me` }),
    });
    const authorize = res.headers.get('location') ?? '';
    assert.equal(res.status, 302, logs());
    assert.ok(authorize.startsWith(`${server.baseUrl}/oidc/authorize?`), authorize);
    return authorize;
  };

  /** Back at the site's callback with the code: Auth.js redeems it and sets the session cookie. */
  const finishAuthjsSignIn = async (jar: CookieJar, back: string): Promise<Me> => {
    assert.ok(back.startsWith(`${authjsCallback}?code=`), back);
    const res = await jar.fetch(back);
    assert.equal(res.status, 302, logs());
    assert.equal(res.headers.get('location'), `${authjsUrl}/me`, logs());
    const answer = await me(jar);
    assert.equal(answer.status, 200, `${JSON.stringify(answer.body)}\n${logs()}`);
    return answer.body;
  };

  before(async () => {
    server = await startServer({ name: 'mandate', env: { OUTBOUND_ALLOW_LOOPBACK: 'true', OUTBOX_POLL_MS: '200' } });
    owner = await HttpOwner.signUp(server, server.baseUrl, { label: 'authjs' });
    const { privateKey, publicJwk } = await generateAgentKeyPair();
    agentId = await owner.createAgent('Shopper', publicJwk);
    agent = new MandateAgent({ serviceUrl: server.baseUrl, agentId, privateKey: await exportJWK(privateKey) });

    const authjsPort = await freePort();
    authjsUrl = `http://127.0.0.1:${authjsPort}`;
    const authjsRegistration = registrationAt(authjsUrl, { name: 'Auth.js shop', logout: true });
    authjsCallback = authjsRegistration.redirect_uris[0] ?? '';
    authjsLogout = authjsRegistration.backchannel_logout_uri ?? '';
    const a = await owner.ok<{ client_id: string; client_secret: string }>('POST', '/api/oidc/clients', authjsRegistration);
    authjsClient = a.client_id;
    authjs = runAsDocumented('examples/authjs-site/server.ts', {
      AUTH_MANDATE_ISSUER: server.baseUrl, AUTH_MANDATE_ID: a.client_id, AUTH_MANDATE_SECRET: a.client_secret, AUTH_SECRET: randomBytes(32).toString('hex'), PORT: String(authjsPort),
    });

    const rpPort = await freePort();
    rpUrl = `http://127.0.0.1:${rpPort}`;
    // As the guide says for this site: the same registration, without a back-channel logout receiver.
    const rpRegistration = registrationAt(rpUrl, { name: 'openid-client shop', logout: false });
    rpCallback = rpRegistration.redirect_uris[0] ?? '';
    const r = await owner.ok<{ client_id: string; client_secret: string }>('POST', '/api/oidc/clients', rpRegistration);
    rpClient = { id: r.client_id, secret: r.client_secret };
    rp = runAsDocumented('examples/openid-client/sign-in.ts', {
      AUTH_MANDATE_ISSUER: server.baseUrl, AUTH_MANDATE_ID: r.client_id, AUTH_MANDATE_SECRET: r.client_secret, SITE_URL: rpUrl, PORT: String(rpPort),
    });
    await Promise.all([authjs.waitFor('listening on'), rp.waitFor('listening on')]);
  });

  after(async () => {
    for (const c of children) await c.stop();
    await server?.stop();
  });

  it('the agent signs in at the Auth.js site: PKCE S256, the owner approves the card with the passkey, /me shows the agent', async () => {
    const jar = new CookieJar();
    const authorize = await startAuthjsSignIn(jar);
    const q = new URL(authorize).searchParams;
    assert.deepEqual([q.get('client_id'), q.get('redirect_uri'), q.get('response_type'), q.get('scope'), q.get('code_challenge_method')], [authjsClient, authjsCallback, 'code', 'openid profile', 'S256']);

    const [back] = await Promise.all([followAuthorize(agent, authorize, 100), approveSignIn(authjsClient)]);
    const body = await finishAuthjsSignIn(jar, back);
    assert.equal(body.act.name, 'Shopper');
    assert.match(body.user.name, /^Shopper \(agent of .+\)$/);
    assert.match(body.sub, /^\S{16,}$/);
    assert.notEqual(body.act.sub, agentId, 'act.sub is pairwise too');
    assert.match(body.sid, /^\S{8,}$/);
    first = { jar, me: body };
  });

  it('a second sign-in is answered at once: the grant the approval made covers it', async () => {
    const jar = new CookieJar();
    const authorize = await startAuthjsSignIn(jar);
    const res = await fetch(authorize, { redirect: 'manual', headers: await agent.signInHeaders(authorize) });
    assert.equal(res.status, 302);
    const back = res.headers.get('location') ?? '';
    assert.ok(back.startsWith(`${authjsCallback}?code=`), `no wait: ${back}`);
    const direct = await followAuthorize(agent, await startAuthjsSignIn(new CookieJar()), 100);
    assert.ok(direct.startsWith(`${authjsCallback}?code=`), `the guide's helper goes straight back too: ${direct}`);
    const body = await finishAuthjsSignIn(jar, back);
    assert.equal(body.sub, first.me.sub, 'the same person at the same site');
    assert.deepEqual(body.act, first.me.act);
    assert.notEqual(body.sid, first.me.sid, 'another sign-in');
    assert.equal((await owner.pending()).length, 0, 'no card this time');
    second = { jar, me: body };
  });

  it('the Auth.js site refuses forged logout tokens (400) and ends no session', async () => {
    const kid = ((await (await fetch(`${server.url}/oidc/jwks`)).json()) as { keys: { kid: string }[] }).keys[0]?.kid ?? '';
    const now = Math.floor(Date.now() / 1000);
    const claims = (extra: Record<string, unknown> = {}) => ({ iss: server.baseUrl, aud: authjsClient, iat: now, exp: now + 120, jti: randomBytes(12).toString('base64url'), sid: first.me.sid, sub: first.me.sub, events: { [LOGOUT_EVENT]: {} }, ...extra });
    const other = await generateKeyPair('ES256');
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const forged: [string, string][] = [
      ['signed with another key under Mandate\'s kid', await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256', typ: 'logout+jwt', kid }).sign(other.privateKey)],
      ['alg none', `${b64({ alg: 'none', typ: 'logout+jwt' })}.${b64(claims())}.`],
      ['HS256 with the client id as secret', await new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', typ: 'logout+jwt' }).sign(new TextEncoder().encode(authjsClient))],
    ];
    const post = (body: string, type = 'application/x-www-form-urlencoded') => fetch(authjsLogout, { method: 'POST', headers: { 'content-type': type }, body });
    for (const [what, token] of forged) {
      const res = await post(new URLSearchParams({ logout_token: token }).toString());
      assert.equal(res.status, 400, what);
      assert.equal(((await res.json()) as { error: string }).error, 'invalid_request', what);
    }
    assert.equal((await post(JSON.stringify({ logout_token: forged[0]?.[1] }), 'application/json')).status, 400, 'not a form');
    assert.equal((await post('')).status, 400, 'no token');
    await until('the site to log each refusal', () => (authjs.output().match(/back-channel logout refused/g)?.length === forged.length + 2 ? true : undefined), { ms: 5_000, describe: logs });
    assert.equal((await me(first.jar)).status, 200, 'the first session lives on');
    assert.equal((await me(second.jar)).status, 200, 'the second too');
  });

  it('the agent signs in at the openid-client site; /me shows the ID token\'s sub and act; the refresh token rotates', async () => {
    rpJar = new CookieJar();
    const login = await rpJar.fetch(`${rpUrl}/login`);
    assert.equal(login.status, 302, rp.output());
    const authorize = login.headers.get('location') ?? '';
    assert.ok(authorize.startsWith(`${server.baseUrl}/oidc/authorize?`), authorize);
    assert.equal(new URL(authorize).searchParams.get('code_challenge_method'), 'S256');
    const rpClient = new URL(authorize).searchParams.get('client_id') ?? '';
    const [back] = await Promise.all([followAuthorize(agent, authorize, 100), approveSignIn(rpClient)]);
    assert.ok(back.startsWith(`${rpCallback}?`), back);
    const callback = await rpJar.fetch(back);
    assert.equal(callback.status, 302, `${await callback.text()}\n${logs()}`);
    assert.equal(callback.headers.get('location'), '/me');
    const res = await rpJar.fetch(`${rpUrl}/me`);
    const body = (await res.json()) as { sub: string; act: { sub: string; name: string }; name: string; sid: string; amr: string[] };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.act.name, 'Shopper');
    assert.match(body.name, /^Shopper \(agent of .+\)$/);
    assert.deepEqual(body.amr, ['agent', 'passkey']);
    for (let i = 0; i < 2; i++) {
      const refreshed = await rpJar.fetch(`${rpUrl}/refresh`, { method: 'POST' });
      assert.deepEqual(await refreshed.json(), { sub: body.sub, expires_in: 600 }, `refresh ${i + 1}`);
    }
    assert.equal((await new CookieJar().fetch(`${rpUrl}/me`)).status, 401, 'another browser is not signed in');
  });

  it('CIBA from the site\'s server (examples/openid-client/ciba.ts): the owner reads the binding message as written and approves; a new sign-in of the same agent', async () => {
    const signedIn = (await (await rpJar.fetch(`${rpUrl}/me`)).json()) as { sub: string; act: { sub: string } };
    const config = await client.discovery(new URL(server.baseUrl), rpClient.id, rpClient.secret, undefined, { execute: [client.allowInsecureRequests] });
    const message = 'Confirm order #42 <b>"12 €"</b>';
    type Card = { id: string; sign_in?: { flow: string; binding_message: string | null; client_name: string } };
    const phone = async () => {
      const card = await until('the CIBA card', async () => ((await owner.pending()) as Card[]).find((p) => p.sign_in?.flow === 'ciba'));
      assert.deepEqual([card.sign_in?.binding_message, card.sign_in?.client_name], [message, 'openid-client shop']);
      await owner.approve(card.id);
    };
    const [tokens] = await Promise.all([confirmWithOwner(config, signedIn.act.sub, message), phone()]);
    const claims = tokens.claims();
    assert.equal(claims?.sub, signedIn.sub, 'the same person at this site');
    assert.equal((claims?.act as { sub: string }).sub, signedIn.act.sub, 'the same agent');
    assert.deepEqual(claims?.amr, ['agent', 'passkey']);
  });

  it('removing the agent ends the sign-ins: the Auth.js site gets and verifies logout tokens, /me answers 401 with the old cookies', async () => {
    const keptCookie = first.jar.copy();
    await owner.ok('DELETE', `/api/agents/${agentId}`);
    await until('both Auth.js sessions to end', async () => ((await me(first.jar)).status === 401 && (await me(second.jar)).status === 401 ? true : undefined), { ms: 10_000, describe: logs });
    const logged = (sid: string) => authjs.output().includes(`back-channel logout: sign-in ${sid} ended`);
    await until('the site to log both logouts', () => (logged(first.me.sid) && logged(second.me.sid) ? true : undefined), { ms: 5_000, describe: logs });
    assert.equal((await me(keptCookie)).status, 401, 'the old cookie, sent again');
    const refreshed = await rpJar.fetch(`${rpUrl}/refresh`, { method: 'POST' });
    assert.equal(refreshed.status, 401, 'the openid-client site\'s refresh token died with the sign-in');
  });

  it(`${GUIDE} quotes the example files whole`, () => {
    const doc = readFileSync(join(REPO_ROOT, GUIDE), 'utf8');
    const quoted = [...doc.matchAll(/<!-- from (examples\/[\w.-]+\/[\w.-]+) -->\n```ts\n([\s\S]*?)```/g)].map((m) => [m[1] ?? '', m[2] ?? ''] as const);
    const files = ['examples/authjs-site', 'examples/openid-client', 'examples/oidc-agent'].flatMap((dir) => readdirSync(join(REPO_ROOT, dir)).filter((f) => f.endsWith('.ts')).map((f) => `${dir}/${f}`));
    assert.deepEqual(quoted.map(([file]) => file).sort(), files.sort(), 'every example file is quoted, once');
    for (const [file, code] of quoted) assert.equal(code, readFileSync(join(REPO_ROOT, file), 'utf8'), `${GUIDE}: the block differs from ${file}`);
  });
});

describe('the Auth.js example\'s back-channel logout receiver, alone', () => {
  // examples/authjs-site/backchannel-logout.ts on an Express app in this process, against a stand-in
  // issuer (discovery and JWKS on 127.0.0.1) whose key the test holds: every rule of Back-Channel
  // Logout 1.0 §2.6 broken once, each refused with 400 and ending nothing.
  const CLIENT = 'c_shop';
  const servers: Server[] = [];
  const ended: string[] = [];
  let issuer = '';
  let receiver = '';
  let key: CryptoKey;

  const listen = async (handler: Parameters<typeof createServer>[1]): Promise<string> => {
    const s = createServer(handler);
    servers.push(s);
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  };
  const receiverFor = (iss: string) => {
    const app = express();
    app.post('/backchannel-logout', ...backchannelLogout({ issuer: iss, clientId: CLIENT, endSession: (sid) => ended.push(sid) }));
    return listen(app);
  };
  const post = (body: string, type = 'application/x-www-form-urlencoded', to = receiver) =>
    fetch(`${to}/backchannel-logout`, { method: 'POST', headers: { 'content-type': type }, body });
  const form = (token: string) => new URLSearchParams({ logout_token: token }).toString();
  let n = 0;
  const claims = (extra: Record<string, unknown> = {}) => {
    const iat = Math.floor(Date.now() / 1000);
    return { iss: issuer, aud: CLIENT, iat, exp: iat + 120, jti: `jti-${++n}`, sub: 'pairwise-sub', sid: `sid-${n}`, events: { [LOGOUT_EVENT]: {} }, ...extra };
  };
  const sign = (c: Record<string, unknown>, header: Record<string, unknown> = {}, with_: CryptoKey = key) =>
    new SignJWT(c).setProtectedHeader({ alg: 'ES256', typ: 'logout+jwt', kid: 'k1', ...header }).sign(with_);

  before(async () => {
    const pair = await generateKeyPair('ES256');
    key = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    issuer = await listen((req, res) => {
      const body = req.url === '/.well-known/openid-configuration' ? { issuer, jwks_uri: `${issuer}/oidc/jwks` } : req.url === '/oidc/jwks' ? { keys: [jwk] } : undefined;
      res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? {}));
    });
    receiver = await receiverFor(issuer);
  });
  after(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  });

  it('ends the sign-in a valid token names, once, and refuses every broken token with 400', async () => {
    const good = claims();
    const token = await sign(good);
    const ok = await post(form(token));
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('cache-control'), 'no-store');
    assert.deepEqual(ended, [good.sid]);

    const now = Math.floor(Date.now() / 1000);
    const other = await generateKeyPair('ES256');
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const bad: [string, string | Promise<string>, RegExp, ('json' | 'two' | 'none')?][] = [
      ['the same token again', token, /jti already used/],
      ['typ JWT', sign(claims(), { typ: 'JWT' }), /"typ"/],
      ['no typ', sign(claims(), { typ: undefined }), /"typ"/],
      ['another issuer', sign(claims({ iss: 'http://127.0.0.1:1' })), /"iss"/],
      ['another audience', sign(claims({ aud: 'c_other' })), /"aud"/],
      ['issued 10 minutes ago', sign(claims({ iat: now - 600, exp: now + 600 })), /"iat" .*too far in the past/],
      ['issued in the future', sign(claims({ iat: now + 120, exp: now + 240 })), /"iat" .*in the past/],
      ['expired', sign(claims({ iat: now - 100, exp: now - 10 })), /"exp"/],
      ['no exp', sign(claims({ exp: undefined })), /missing required "exp"/],
      ['no jti', sign(claims({ jti: undefined })), /missing required "jti"/],
      ['no sid', sign(claims({ sid: undefined })), /missing required "sid"/],
      ['a nonce', sign(claims({ nonce: 'n' })), /nonce/],
      ['no events', sign(claims({ events: undefined })), /logout event/],
      ['events without the logout event', sign(claims({ events: { 'http://example.com/other': {} } })), /logout event/],
      ['the logout event not an object', sign(claims({ events: { [LOGOUT_EVENT]: true } })), /logout event/],
      ['signed with another key', sign(claims(), {}, other.privateKey), /signature verification failed/],
      ['an unknown kid', sign(claims(), { kid: 'k2' }, other.privateKey), /no applicable key/],
      ['alg none', `${b64({ alg: 'none', typ: 'logout+jwt' })}.${b64(claims())}.`, /"alg"/],
      ['a tampered payload', token.replace(/\.[^.]+\./, `.${b64(claims())}.`), /signature verification failed/],
      ['not a JWT', 'not-a-jwt', /Invalid Compact JWS/],
      ['JSON, not a form', token, /send one logout_token/, 'json'],
      ['two logout_tokens', token, /send one logout_token/, 'two'],
      ['no logout_token', '', /send one logout_token/, 'none'],
    ];
    for (const [why, t, reason, how] of bad) {
      const value = await t;
      const res = how === 'json' ? await post(JSON.stringify({ logout_token: value }), 'application/json')
        : how === 'two' ? await post(`${form(value)}&${form(value)}`)
        : how === 'none' ? await post('other=1')
        : await post(form(value));
      const body = (await res.json()) as { error: string; error_description: string };
      assert.equal(res.status, 400, why);
      assert.equal(body.error, 'invalid_request', why);
      assert.match(body.error_description, reason, why);
    }
    assert.deepEqual(ended, [good.sid], 'nothing else ended');
  });

  it('answers 503 while the issuer\'s keys cannot be fetched, so that Mandate sends the logout again', async () => {
    const down = await freePort();
    const lonely = await receiverFor(`http://127.0.0.1:${down}`);
    const res = await post(form(await sign(claims({ iss: `http://127.0.0.1:${down}` }))), 'application/x-www-form-urlencoded', lonely);
    assert.equal(res.status, 503);
    assert.equal(((await res.json()) as { error: string }).error, 'temporarily_unavailable');
    assert.equal(ended.length, 1);
  });
});
