/**
 * docs/reference/account-data.md cannot rot: every fenced block is marked (`<!-- request: NAME -->`,
 * `<!-- answer: NAME -->`, `<!-- sections: export -->`); each request is sent to the service and its
 * answer compared with the page's. An unmarked block fails.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FixedClock } from '../src/clock.ts';
import { EXPORT_SECTIONS } from '../src/domain/privacy/export-sections.ts';
import { REPO_ROOT } from './helpers/child-process.ts';
import { expectStatus, json, remoteAddress, signUp, testApp, type TestApp } from './helpers/app.ts';
import { lastLinkToken, verifyEmail } from './helpers/email-links.ts';

const PAGE = 'docs/reference/account-data.md';

interface Block { marker: string; name: string; lang: string; text: string }

function blocks(): Block[] {
  const text = readFileSync(join(REPO_ROOT, PAGE), 'utf8');
  return [...text.matchAll(/(?:<!-- ([a-z]+): ([\w.-]+) -->\n)?```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ marker: m[1] ?? '', name: m[2] ?? '', lang: m[3] ?? '', text: m[4] ?? '' }));
}

/** An `http` block as method, path, headers and JSON body. */
function parseRequest(text: string): { method: string; url: string; headers: Record<string, string>; body: unknown } {
  const [head = '', body = ''] = text.split(/\n\n/, 2);
  const [line = '', ...headerLines] = head.split('\n');
  const [method = '', url = ''] = line.split(' ');
  const headers = Object.fromEntries(headerLines.filter((h) => h.trim()).map((h) => h.split(/:\s*/, 2) as [string, string]).map(([k, v]) => [k.toLowerCase(), v]));
  return { method, url, headers, body: body.trim() ? JSON.parse(body) : undefined };
}

describe(PAGE, () => {
  let t: TestApp;
  const all = blocks();
  const block = (marker: string, name: string): Block => {
    const b = all.find((x) => x.marker === marker && x.name === name);
    assert.ok(b, `${PAGE} has no <!-- ${marker}: ${name} --> block`);
    return b;
  };
  before(async () => {
    t = await testApp({ env: { OUTBOX_POLL_MS: '600000' }, clock: new FixedClock(Date.now()) });
  });
  after(() => t.close());

  it('marks every block', () => {
    assert.ok(all.length >= 6);
    for (const b of all) assert.ok(['request', 'answer', 'sections'].includes(b.marker), `an unmarked block in ${PAGE}: ${b.text.slice(0, 60)}`);
  });

  it('the forgot request answers as shown, and the reset request with the mailed token answers as shown', async () => {
    const owner = await signUp(t.app, 'ann@example.com');
    await verifyEmail(t, owner);
    const forgot = parseRequest(block('request', 'forgot').text);
    const asked = await t.app.inject({ method: forgot.method as 'POST', url: forgot.url, headers: forgot.headers, remoteAddress: remoteAddress(), payload: forgot.body as Record<string, unknown> });
    expectStatus(asked, 200);
    assert.deepEqual(json(asked), JSON.parse(block('answer', 'forgot').text));

    await t.services.passwordReset.settled();
    const token = await lastLinkToken(t, owner.user.id, 'password_reset', '/api/password/reset');
    const reset = parseRequest(block('request', 'reset').text);
    const body: Record<string, string> = { ...(reset.body as Record<string, string>), token };
    const done = await t.app.inject({ method: reset.method as 'POST', url: reset.url, headers: reset.headers, remoteAddress: remoteAddress(), payload: body });
    expectStatus(done, 200);
    assert.deepEqual(json(done), JSON.parse(block('answer', 'reset').text));
    expectStatus(await t.app.inject({ method: 'POST', url: '/api/login', remoteAddress: remoteAddress(), payload: { email: 'ann@example.com', password: body.new_password } }), 200);
  });

  it('the export request answers a file whose sections are the ones listed', async () => {
    const owner = await signUp(t.app);
    const req = parseRequest(block('request', 'export').text);
    const res = await t.app.inject({ method: req.method as 'GET', url: req.url, headers: { ...req.headers, authorization: `Bearer ${owner.session_token}` } });
    expectStatus(res, 200);
    assert.match(String(res.headers['content-disposition']), /^attachment; filename="mandate-export-\d{4}-\d{2}-\d{2}\.json"$/);
    const listed = JSON.parse(block('sections', 'export').text) as string[];
    assert.deepEqual(listed, EXPORT_SECTIONS.map((s) => s.name));
    assert.deepEqual((JSON.parse(res.body) as { sections: string[] }).sections, listed);
  });
});
