/**
 * docs/operators/registering.md cannot rot: every fenced block is marked, each request is sent to a
 * service as written (the example operator id replaced by a real one), and each answer shown has the
 * shape, and the fixed values, the service answers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectStatus, json, signUp, testApp, type TestApp } from './helpers/app.ts';
import { verifyEmail } from './helpers/email-links.ts';
import { startOperatorSite, type OperatorSite } from './helpers/stand-ins/operator-site.ts';
import { markedBlocks } from './helpers/doc-examples.ts';

const PAGE = 'docs/operators/registering.md';
const EXAMPLE_ID = 'op_k5qhq3v4xbn2yqpmg2xq7tcl5e';
const ID = /^op_[a-z2-7]{26}$/;
const LINE = /^mandate-operator=op_[a-z2-7]{26}:[A-Za-z0-9_-]{24}$/;
const SECRET = /^[A-Za-z0-9_-]{43}$/;

const { blocks, block } = markedBlocks(PAGE);

/** A documented curl: its method, path, bearer variable and JSON body. */
function curl(name: string): { method: string; path: string; token: string; body: string | undefined } {
  const text = block('run', name);
  const m = /curl -s -X (POST|GET) https:\/\/mandate\.example(\/\S+)/.exec(text);
  assert.ok(m?.[1] && m[2], `${name}: a curl to https://mandate.example`);
  const token = /Authorization: Bearer \$(\w+)/.exec(text)?.[1];
  assert.ok(token, `${name}: sends a session token`);
  return { method: m[1], path: m[2], token, body: /-d '([^']+)'/.exec(text)?.[1] };
}

/** The same keys, recursively, with values of the same JSON type. */
function sameShape(actual: unknown, shown: unknown, at = '$'): void {
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  assert.equal(kind(actual), kind(shown), `${at}: ${JSON.stringify(actual)} vs ${JSON.stringify(shown)}`);
  if (kind(shown) === 'object') {
    const a = actual as Record<string, unknown>;
    const s = shown as Record<string, unknown>;
    assert.deepEqual(Object.keys(a).sort(), Object.keys(s).sort(), at);
    for (const k of Object.keys(s)) sameShape(a[k], s[k], `${at}.${k}`);
  }
}

describe(PAGE, () => {
  let t: TestApp;
  let site: OperatorSite;
  const tokens: Record<string, Record<string, string>> = {};
  before(async () => {
    site = await startOperatorSite();
    t = await testApp({ env: { OUTBOUND_ALLOW_LOOPBACK: 'true', ADMIN_EMAILS: 'admin@example.com' } });
    tokens.SESSION_TOKEN = (await signUp(t.app)).auth;
    const admin = await signUp(t.app, 'admin@example.com');
    await verifyEmail(t, admin);
    tokens.ADMIN_SESSION_TOKEN = admin.auth;
  });
  after(async () => {
    await t.close();
    await site.close();
  });

  const send = (name: string, id: string, body?: string) => {
    const c = curl(name);
    const auth = tokens[c.token];
    assert.ok(auth, `${name}: $${c.token} is a documented token`);
    const payload = body ?? c.body;
    return t.app.inject({ method: c.method as 'POST', url: c.path.replace(EXAMPLE_ID, id), headers: { ...auth, ...(payload ? { 'content-type': 'application/json' } : {}) }, ...(payload ? { payload } : {}) });
  };

  it('every fenced block is marked, and so checked here', () => {
    assert.deepEqual(blocks.filter((b) => b.marker === '').map((b) => b.text.slice(0, 60)), []);
  });

  it('registers as shown: the answer has the documented shape and values; the example is self-consistent', async () => {
    const res = await send('register', EXAMPLE_ID);
    expectStatus(res, 200);
    const got = json<Record<string, unknown> & { id: string; secret: string; verification: { line: string } }>(res);
    const shown = JSON.parse(block('answer', 'register')) as typeof got;
    sameShape(got, shown);
    for (const k of ['name', 'domain', 'redirect_uris', 'browser', 'status', 'verified', 'verified_at']) assert.deepEqual(got[k], shown[k], k);
    assert.deepEqual(got.verification.line.split(':')[0], `mandate-operator=${got.id}`);
    assert.deepEqual((got.verification as unknown as { url: string }).url, (shown.verification as unknown as { url: string }).url);
    for (const [value, label] of [[got.id, 'id'], [shown.id, 'example id']] as const) assert.match(value, ID, label);
    for (const line of [got.verification.line, shown.verification.line, block('file', 'service-site').trim()]) assert.match(line, LINE);
    assert.equal(block('file', 'service-site').trim(), shown.verification.line, 'the file shows the answer\'s line');
    assert.equal(shown.id, EXAMPLE_ID);
    for (const s of [got.secret, shown.secret]) assert.match(s, SECRET);
  });

  it('rotates, verifies and switches on as shown', async () => {
    const registered = await t.app.inject({ method: 'POST', url: '/api/operators', headers: tokens.SESSION_TOKEN, payload: { name: 'Local', redirect_uris: [`${site.origin}/cb`], browser: 'user' } });
    expectStatus(registered, 200);
    const op = json<{ id: string; verification: { line: string } }>(registered);

    const rotated = await send('rotate', op.id);
    expectStatus(rotated, 200);
    assert.match(json<{ secret: string }>(rotated).secret, SECRET);

    site.serve({ status: 200, body: `${block('file', 'service-site').replace(/mandate-operator=\S+/, op.verification.line)}` });
    const verified = await send('verify', op.id);
    expectStatus(verified, 200);
    sameShape(json(verified), JSON.parse(block('answer', 'verify')));
    assert.equal(json<{ id: string }>(verified).id, op.id);

    const switched = await send('admin-switch', op.id);
    expectStatus(switched, 200);
    assert.equal(json<{ status: string }>(switched).status, 'active');
    assert.deepEqual(JSON.parse(curl('admin-switch').body ?? ''), { enabled: true });
  });
});
