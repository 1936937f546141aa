import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatCharacterIn, formatCharacterProblem } from '../src/domain/oidc/format-chars.ts';

// Invisible formatting characters (Unicode Cf) in text the owner reads to decide: a CIBA
// binding_message and an OIDC client's name (issue 22). Emoji sequences stay allowed.

describe('format characters in what the owner reads', () => {
  it('finds bidi controls, zero-width characters, the BOM, soft hyphens and stray tags, naming the first', () => {
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
      ['\u061C', 'U+061C'], // Arabic letter mark
    ];
    for (const [text, found] of cases) assert.equal(formatCharacterIn(text), found, JSON.stringify(text));
  });

  it('allows plain text, emoji joined by ZWJ (with variation selectors and skin tones) and subdivision flags', () => {
    for (const text of ['Real Shop', 'Order #42 <b>"total"</b> — 12 €', '👩\u200D💻', '👨\u200D👩\u200D👧', '❤️\u200D🔥', '👩🏽\u200D💻', '🏳️\u200D🌈', '\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}', 'עברית and English']) {
      assert.equal(formatCharacterIn(text), undefined, JSON.stringify(text));
    }
  });

  it('says which field and which character', () => {
    assert.equal(formatCharacterProblem('name', 'Shop'), null);
    assert.match(formatCharacterProblem('binding_message', 'Pay\u202E') ?? '', /^binding_message must not contain invisible formatting characters \(it holds U\+202E\)/);
  });
});
