import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { findUnreadable, isReadable, requireReadable } from '../src/domain/readable-text.ts';
import { AppError } from '../src/domain/errors.ts';
import { expectStatus, json, signUp, testApp, type TestApp } from './helpers/app.ts';
import { createAgent } from './helpers/agents.ts';

// Names, titles and notes a person reads must read as what was sent (issue 22, hardening): Unicode
// format characters (category Cf) such as right-to-left overrides and zero-width spaces are refused.

const RLO = '\u202E';
const FORMAT_CHARACTERS = ['\u00AD', '\u061C', '\u200B', '\u200C', '\u200D', '\u200E', '\u200F', '\u202A', '\u202B', '\u202C', '\u202D', RLO, '\u2060', '\u2066', '\u2067', '\u2068', '\u2069', '\uFEFF', '\u{E0041}'];

describe('readable text (domain/readable-text.ts)', () => {
  it('accepts what reads as sent: letters of any script, accents, emoji and their joined sequences', () => {
    for (const ok of ['Alice', 'Zoë’s laptop', 'Ελένη', 'محمد', '李小龙', 'e\u0301', '👩\u200D💻 coder', '🏳️\u200D🌈', '👍🏽', 'a b\tc']) {
      assert.equal(isReadable(ok.replace('\t', ' '), 'line'), true, JSON.stringify(ok));
      assert.equal(isReadable(ok, 'text'), true, JSON.stringify(ok));
    }
    assert.equal(isReadable('line one\nline two\r\n\tindented', 'text'), true, 'a note keeps its lines');
  });

  it('refuses every format character, and says which and where', () => {
    for (const ch of FORMAT_CHARACTERS) {
      const found = findUnreadable(`Pay 5${ch} EUR`, 'line');
      assert.ok(found, `U+${ch.codePointAt(0)?.toString(16)} is refused`);
      assert.equal(found.position, 6);
      assert.equal(found.codePoint, `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`);
      assert.equal(isReadable(`Pay 5${ch} EUR`, 'text'), false);
    }
    // The card that reads "Invoice fdp.exe" but is "Invoice exe.pdf" spelled backwards: refused.
    assert.deepEqual(findUnreadable(`Invoice ${RLO}fdp.exe`, 'line'), { position: 9, codePoint: 'U+202E' });
    // A joiner that joins no pictographs hides a character boundary: refused.
    assert.equal(isReadable('pay\u200Dpal', 'line'), false);
    assert.equal(isReadable('👩\u200Dx', 'line'), false);
  });

  it('names the first format character outside an emoji: bidi controls, zero-width characters, the BOM, soft hyphens, stray tags', () => {
    const cases: Array<[string, string]> = [
      ['Real Shop\u202E', 'U+202E'], // right-to-left override
      ['\u2066Shop\u2069', 'U+2066'], // left-to-right isolate
      ['Re\u200Bal', 'U+200B'], // zero-width space
      ['Re\u200Cal', 'U+200C'], // zero-width non-joiner
      ['a\u200Db', 'U+200D'], // a joiner between letters
      ['👩\u200D', 'U+200D'], // a joiner with nothing after
      ['\u200D👩', 'U+200D'], // a joiner with nothing before
      ['x\uFEFF', 'U+FEFF'],
      ['soft\u00ADhyphen', 'U+00AD'],
      ['flag \u{E0067}', 'U+E0067'], // a tag outside a flag
      ['\u{1F3F4}\u{E0067}\u{E0062}', 'U+E0067'], // a flag without its cancel tag
      ['\u061C', 'U+061C'], // Arabic letter mark
    ];
    for (const [text, found] of cases) assert.equal(findUnreadable(text, 'line')?.codePoint, found, JSON.stringify(text));
    for (const text of ['Order #42 <b>"total"</b> — 12 €', '👨\u200D👩\u200D👧', '❤️\u200D🔥', '👩🏽\u200D💻', '\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}', 'עברית and English']) {
      assert.equal(findUnreadable(text, 'line'), undefined, JSON.stringify(text));
    }
  });

  it('refuses controls and separators on one line; in a note only newlines and tabs pass', () => {
    for (const bad of ['a\nb', 'a\u0000b', 'a\u001Bb', 'a\u0085b', 'a\u2028b', 'a\u2029b', 'a\uE000b', 'a\uD800b']) assert.equal(isReadable(bad, 'line'), false, JSON.stringify(bad));
    for (const bad of ['a\u0000b', 'a\u001B[31mred', 'a\u0085b', 'a\u2028b', 'a\uD800b']) assert.equal(isReadable(bad, 'text'), false, JSON.stringify(bad));
  });

  it('property: adding a format character anywhere (but a joiner between pictographs) makes readable text unreadable', () => {
    const readable = fc.string({ unit: fc.constantFrom(...[...'abcXYZ 019-.,é李ح👍']), maxLength: 30 });
    fc.assert(fc.property(readable, fc.constantFrom(...FORMAT_CHARACTERS.filter((c) => c !== '\u200D')), fc.nat(), (text, ch, at) => {
      assert.equal(isReadable(text, 'line'), true);
      const chars = [...text];
      const i = at % (chars.length + 1);
      const spoiled = [...chars.slice(0, i), ch, ...chars.slice(i)].join('');
      assert.equal(findUnreadable(spoiled, 'line')?.position, i + 1);
    }));
  });

  it('requireReadable throws a 400 naming the field, the character and its place', () => {
    assert.equal(requireReadable('name', 'Shop'), 'Shop');
    assert.throws(() => requireReadable('binding_message', `ok${RLO}`), (e: unknown) => e instanceof AppError && e.status === 400 && /^binding_message contains an invisible/.test(e.detail) && /U\+202E at character 3/.test(e.detail));
  });
});

describe('fields a person reads refuse format characters (in process)', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  after(() => t.close());

  const refused = (res: { statusCode: number; body: string }, field: string) => {
    expectStatus(res as Parameters<typeof expectStatus>[0], 422);
    const items = (JSON.parse(res.body) as { detail: { loc: string[]; msg: string; type: string }[] }).detail;
    assert.ok(items.some((d) => d.loc.at(-1) === field && d.type === 'unreadable_text' && /invisible or control character/.test(d.msg)), res.body);
  };

  it('agent, pairing, passkey and push device names, display names, notes, statuses and reports', async () => {
    const owner = await signUp(t.app);
    const agent = await createAgent(t, owner, 'Helper');
    const spoof = `Bank${RLO}kcab`;
    refused(await t.app.inject({ method: 'POST', url: '/api/agents', headers: owner.auth, payload: { name: spoof, jwk: agent.publicJwk } }), 'name');
    refused(await t.app.inject({ method: 'POST', url: '/api/agents/pairing-codes', headers: owner.auth, payload: { name: spoof } }), 'name');
    refused(await t.app.inject({ method: 'POST', url: '/api/v1/agents/pair', payload: { code: 'ABCD-EFGH', name: spoof } }), 'name');
    refused(await t.app.inject({ method: 'PATCH', url: '/api/me', headers: owner.auth, payload: { display_name: `Ali\u200Bce` } }), 'display_name');
    refused(await t.app.inject({ method: 'POST', url: '/api/users', payload: { email: 'zw@example.com', password: 'correct horse battery', display_name: `Ali\u2066ce` } }), 'display_name');
    refused(await t.app.inject({ method: 'POST', url: '/api/push', headers: owner.auth, payload: { endpoint: 'https://push.example/x', keys: { p256dh: 'a', auth: 'b' }, name: spoof } }), 'name');
    const jwt = await agent.jwt();
    refused(await t.app.inject({ method: 'POST', url: '/api/v1/agent-notify', payload: { agent_id: agent.id, agent_jwt: jwt, text: `Paid ${RLO}001 EUR` } }), 'text');
    refused(await t.app.inject({ method: 'POST', url: '/api/v1/agent-notify', payload: { agent_id: agent.id, agent_jwt: jwt, text: 'Paid', title: `Do\u200Bne` } }), 'title');
    refused(await t.app.inject({ method: 'POST', url: '/api/v1/agent-status', payload: { agent_id: agent.id, agent_jwt: jwt, status: `ok\u2067` } }), 'status');
    // What reads as sent still passes: a note on several lines, an emoji name.
    expectStatus(await t.app.inject({ method: 'POST', url: '/api/v1/agent-notify', payload: { agent_id: agent.id, agent_jwt: jwt, text: 'Paid the invoice.\nNext: the receipt.', title: 'Done ✅' } }), 200);
    const named = await t.app.inject({ method: 'POST', url: '/api/agents/pairing-codes', headers: owner.auth, payload: { name: '👩\u200D💻 Coder' } });
    expectStatus(named, 200);
    assert.equal(json<{ name: string }>(named).name, '👩\u200D💻 Coder');
  });
});
