import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { normalizeText, sameDigestSet, textDigest, textDigestSet } from '../src/index.ts';

const sha = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/** Characters the normalisation must remove (one of each kind named in text-digest.ts). */
const INVISIBLES = [
  '\u0000', '\u0007', '\t', '\u001b', '\u007f', '\u0080', '\u009f', // Cc (not LF)
  '\u00ad', '\u061c', '\u180e', '\u200b', '\u200c', '\u200d', '\u200e', '\u200f', // Cf
  '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2060', '\u2066', '\u2067', '\u2068', '\u2069',
  '\ufeff', '\u{e0001}', '\u{e0041}', '\ufff9',
  '\ud800', '\udfff', // lone surrogates
  '\u034f', '\u115f', '\u1160', '\u17b4', '\u17b5', '\u180b', '\u3164', '\ufe0f', '\uffa0', '\u{e0100}',
];

const INSERTABLE = INVISIBLES.filter((ch) => !/^[\ud800-\udfff]$/.test(ch));

describe('normalizeText', () => {
  const table: [string, string, string][] = [
    ['plain text stays', 'Hello, world', 'Hello, world'],
    ['empty stays empty', '', ''],
    ['CRLF, CR, NEL, LS, PS become LF', 'a\r\nb\rc\u0085d\u2028e\u2029f', 'a\nb\nc\nd\ne\nf'],
    ['blank and white-space-only lines dropped', '\n\na\n   \n\t\nb\n\n', 'a\nb'],
    ['lines right-trimmed, left kept', '  a  \n\u00a0b\u3000 ', '  a\n\u00a0b'],
    ['no trailing newline', 'a\n', 'a'],
    ['zero-width and bidi marks removed', 'pa\u200by\u202eme\u2066nt\u2069', 'payment'],
    ['TAB is a control character and goes', 'a\tb', 'ab'],
    ['BOM at the start removed', '\ufeffhello', 'hello'],
    ['visible non-ASCII kept', 'Grüße 👋 日本', 'Grüße 👋 日本'],
    ['emoji variation selector removed', '\u2764\ufe0f', '\u2764'],
    ['a line of only invisibles is blank', 'a\n\u200b\u200d\nb', 'a\nb'],
    ['a space before an invisible is trimmed', 'a \u200b\nb', 'a\nb'],
    ['CR, invisible, LF is still one line break', 'a\r\u200b\nb', 'a\nb'],
  ];
  for (const [name, input, expected] of table) {
    it(name, () => assert.equal(normalizeText(input), expected));
  }

  it('removes every listed invisible character', () => {
    for (const ch of INVISIBLES) assert.equal(normalizeText(`x${ch}y`), 'xy', `U+${ch.codePointAt(0)!.toString(16)}`);
  });
});

describe('textDigest', () => {
  it('is SHA-256 of the UTF-8 of the normalised text, lowercase hex', () => {
    assert.equal(textDigest(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    assert.equal(textDigest('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.equal(textDigest('abc\r\n\r\n'), textDigest('abc'));
    assert.equal(textDigest('Grüße\r\nzwei  '), sha('Grüße\nzwei'));
    assert.match(textDigest('x'), /^[0-9a-f]{64}$/);
  });

  it('differs when visible text differs', () => {
    assert.notEqual(textDigest('pay 10'), textDigest('pay 100'));
    assert.notEqual(textDigest('a b'), textDigest('ab'));
    assert.notEqual(textDigest('Hello'), textDigest('hello'));
  });

  it('digest sets are sorted, without repeats, compared as sets', () => {
    const set = textDigestSet(['b', 'a', 'a\r\n']);
    assert.deepEqual(set, [textDigest('a'), textDigest('b')].sort());
    assert.ok(sameDigestSet([textDigest('a'), textDigest('b')], [textDigest('b'), textDigest('a'), textDigest('a')]));
    assert.ok(!sameDigestSet([textDigest('a')], [textDigest('a'), textDigest('b')]));
    assert.ok(sameDigestSet([], []));
  });
});

describe('text digest properties', () => {
  const anyText = fc.string({ unit: 'binary', maxLength: 200 });
  const textWithBreaks = fc
    .array(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.constantFrom('\n', '\r\n', '\r', ' ', '\t', '\u2028')), {
      maxLength: 30,
    })
    .map((parts) => parts.join(''));

  it('normalising is idempotent', () => {
    fc.assert(fc.property(fc.oneof(anyText, textWithBreaks), (t) => normalizeText(normalizeText(t)) === normalizeText(t)), {
      numRuns: 500,
    });
  });

  it('inserting invisible characters anywhere never changes the digest', () => {
    fc.assert(
      fc.property(
        fc.oneof(anyText, textWithBreaks),
        // Not lone surrogates: a high one inserted before a low one makes a real character (a pair),
        // which is no longer invisible; the table test above shows that each alone is removed.
        fc.array(fc.tuple(fc.nat(), fc.constantFrom(...INSERTABLE)), { minLength: 1, maxLength: 10 }),
        (text, inserts) => {
          // Insert between UTF-16 code units only where that does not split a surrogate pair of the text.
          const units = Array.from(text);
          for (const [at, ch] of inserts) units.splice(at % (units.length + 1), 0, ch);
          return textDigest(units.join('')) === textDigest(text);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('the normalised text has no CR, no blank line, no trailing white space, no edge newline', () => {
    fc.assert(
      fc.property(fc.oneof(anyText, textWithBreaks), (t) => {
        const n = normalizeText(t);
        return n === '' || !n.includes('\r') && !n.startsWith('\n') && !n.endsWith('\n') && n.split('\n').every((l) => l.length > 0 && l === l.trimEnd());
      }),
      { numRuns: 500 },
    );
  });
});
