import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { checkAgentMessage, isCanonicalFrame } from '../src/domain/takeovers/relay-messages.ts';
import { base64AlphabetUsesSimd, isBase64Alphabet, isBase64AlphabetLoop } from '../src/domain/takeovers/base64-alphabet.ts';

// The relay's fast frame check (isCanonicalFrame) must never let through what the full check
// (checkAgentMessage) refuses: it may only say "valid" or "read it the long way".

const jpeg = (n: number): string => Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), randomBytes(n)]).toString('base64');
const sdkFrame = (data: string, w = 1280, h = 800): string => JSON.stringify({ t: 'frame', data, w, h });
const fast = (text: string): true | undefined => isCanonicalFrame(Buffer.from(text, 'utf8'));

/**
 * The fast check as it was before it stopped allocating (a latin1 string, a regular expression and
 * Node's base64 decoder per frame): the accept/reject behaviour the allocation-free one must keep.
 */
const LEGACY_HEAD = Buffer.from('{"t":"frame","data":"/9j/');
const LEGACY_TAIL = /^","w":([1-9]\d{0,4}),"h":([1-9]\d{0,4})\}$/;
function legacyCanonicalFrame(bytes: Buffer): true | undefined {
  if (bytes.length < LEGACY_HEAD.length || !bytes.subarray(0, LEGACY_HEAD.length).equals(LEGACY_HEAD)) return undefined;
  const start = LEGACY_HEAD.length - 4;
  const end = bytes.indexOf(0x22, start);
  if (end < 0 || (end - start) % 4 !== 0) return undefined;
  const tail = LEGACY_TAIL.exec(bytes.toString('latin1', end));
  if (!tail || Number(tail[1]) > 10_000 || Number(tail[2]) > 10_000) return undefined;
  for (const c of [0x2d, 0x5f]) {
    const at = bytes.indexOf(c, start);
    if (at >= 0 && at < end) return undefined;
  }
  const firstEquals = bytes.indexOf(0x3d, start);
  const padding = firstEquals < 0 || firstEquals >= end ? 0 : end - firstEquals;
  if (padding > 2 || (padding === 2 && bytes[end - 1] !== 0x3d)) return undefined;
  const decoded = Buffer.from(bytes.toString('latin1', start, end), 'base64').length;
  return decoded === ((end - start) / 4) * 3 - padding ? true : undefined;
}

/** The rule written out plainly: one regular expression over the bytes read as latin1. */
const REFERENCE = /^\{"t":"frame","data":"(\/9j\/[A-Za-z0-9+/]*={0,2})","w":([1-9]\d{0,4}),"h":([1-9]\d{0,4})\}$/;
function referenceCanonicalFrame(bytes: Buffer): true | undefined {
  const m = REFERENCE.exec(bytes.toString('latin1'));
  return m && m[1]!.length % 4 === 0 && Number(m[2]) <= 10_000 && Number(m[3]) <= 10_000 ? true : undefined;
}

/** All three agree, and a frame the fast check takes is one the full check takes. */
function agree(bytes: Buffer): boolean {
  const got = isCanonicalFrame(bytes);
  const shown = bytes.toString('latin1').slice(0, 120);
  assert.equal(got, legacyCanonicalFrame(bytes), `legacy: ${shown}`);
  assert.equal(got, referenceCanonicalFrame(bytes), `reference: ${shown}`);
  if (got) assert.equal(checkAgentMessage(bytes.toString('utf8')).ok, true, shown);
  return got === true;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** Bytes an adversary would try inside and around the data: padding, base64url, quotes, escapes, whitespace, not ASCII, NUL. */
const TRICKY = [0x3d, 0x2d, 0x5f, 0x22, 0x5c, 0x20, 0x0a, 0x2e, 0x2c, 0x3a, 0x7b, 0x7d, 0x80, 0xc3, 0xff, 0x00, 0x40, 0x5b, 0x60, 0x7b, 0x2a, 0x30, 0x39];
const SIDES = ['1', '9', '10', '640', '10000', '9999', '10001', '99999', '100000', '0', '01', '00', '-1', '1.5', '1e3', '', ' 1', '1 ', '"1"', 'null'];

describe('the relay\'s fast frame check', () => {
  it('takes frames as the agent SDK spells them, with every padding length', () => {
    for (const n of [0, 1, 2, 3, 4, 5, 1000, 50 * 1024]) {
      const text = sdkFrame(jpeg(n));
      assert.equal(fast(text), true, `${n} bytes`);
      assert.equal(checkAgentMessage(text).ok, true);
    }
  });

  it('leaves every other spelling to the full check, which still decides', () => {
    const data = jpeg(300);
    const cases: [string, boolean][] = [
      [JSON.stringify({ data, t: 'frame', w: 1, h: 1 }), true], // another key order: valid, read the long way
      [sdkFrame(data).replace('/9j/', '\\/9j\\/'), true], // JSON escapes: valid, read the long way
      [sdkFrame(data.replace(/.$/, '-')), false], // base64url characters
      [sdkFrame(data.replace(/.$/, '_')), false],
      [sdkFrame(`${data.slice(0, 8)}=${data.slice(9)}`), false], // padding in the middle
      [sdkFrame(`${data.slice(0, 8)} ${data.slice(9)}`), false], // whitespace, which base64 decoders skip
      [sdkFrame(`${data.slice(0, 8)}é${data.slice(9)}`), false], // not ASCII
      [sdkFrame(`${data}AAAA`.slice(1)), false], // not a JPEG
      [sdkFrame(data, 0, 1), false],
      [sdkFrame(data, 10_001, 1), false],
      [sdkFrame(data, 1.5, 1), false],
      [`${sdkFrame(data).slice(0, -1)},"x":1}`, false], // an extra key
      [sdkFrame(data).slice(0, -1), false], // cut short
      ['{"t":"frame","data":"/9j/', false],
    ];
    for (const [text, valid] of cases) {
      assert.equal(fast(text), undefined, text.slice(0, 80));
      assert.equal(checkAgentMessage(text).ok, valid, text.slice(0, 80));
    }
  });

  it('never says valid where the full check refuses (random bytes and mutations of good frames)', () => {
    const good = sdkFrame(jpeg(64), 640, 480);
    fc.assert(fc.property(
      fc.oneof(
        fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
        fc.tuple(fc.nat({ max: good.length - 1 }), fc.integer({ min: 0, max: 255 })).map(([at, byte]) => {
          const b = Buffer.from(good);
          b[at] = byte;
          return b;
        }),
        fc.tuple(fc.nat({ max: good.length }), fc.nat({ max: good.length })).map(([a, b]) => Buffer.from(good.slice(0, Math.min(a, b)) + good.slice(Math.max(a, b)))),
      ),
      (bytes) => void agree(bytes),
    ), { numRuns: 3000 });
  });

  it('takes exactly what it took before it stopped allocating (frames built from adversarial parts)', () => {
    let [framed, accepted] = [0, 0];
    const side = fc.oneof({ weight: 3, arbitrary: fc.constantFrom('1', '640', '10000') }, { weight: 2, arbitrary: fc.constantFrom(...SIDES) });
    const part = fc.oneof(
      { weight: 6, arbitrary: fc.string({ unit: fc.constantFrom(...B64), maxLength: 40 }).map((x) => Buffer.from(x, 'latin1')) },
      fc.constantFrom(...TRICKY).map((b) => Buffer.from([b])),
      fc.constantFrom('=', '==', '===', '/9j/', '"', '","w":', ',"h":', '}').map((x) => Buffer.from(x, 'latin1')),
    );
    fc.assert(fc.property(
      fc.record({
        head: fc.oneof({ weight: 5, arbitrary: fc.constant('{"t":"frame","data":"/9j/') }, fc.constantFrom('{"t":"frame","data":"/9j', '{"t":"frame","data":"/9J/', '{"t":"frame", "data":"/9j/', '{"t":"frame","data":"')),
        data: fc.array(part, { maxLength: 12 }),
        pad: fc.constantFrom('', '', '=', '==', '==='),
        w: side,
        h: side,
        after: fc.oneof({ weight: 5, arbitrary: fc.constant('}') }, fc.constantFrom('', '}}', '} ', '}\n', ',"x":1}', ' }')),
      }),
      ({ head, data, pad, w, h, after }) => {
        if (head === '{"t":"frame","data":"/9j/' && after === '}' && pad.length < 3 && /^[1-9]\d{0,3}$/.test(w) && /^[1-9]\d{0,3}$/.test(h)) framed++;
        if (agree(Buffer.concat([Buffer.from(head, 'latin1'), ...data, Buffer.from(`${pad}","w":${w},"h":${h}${after}`, 'latin1')]))) accepted++;
      },
    ), { numRuns: 20_000 });
    // Not vacuous: many inputs were near misses of a valid frame, and many were valid.
    assert.ok(framed > 1000 && accepted > 200, `framed ${framed}, accepted ${accepted}`);
  });

  it('agrees on every padding and data length, and on large frames broken anywhere (across the check\'s 64 KiB chunks)', () => {
    for (let n = 0; n < 40; n++) for (const pad of ['', '=', '==']) agree(Buffer.from(`{"t":"frame","data":"/9j/${'A'.repeat(n)}${pad}","w":1,"h":1}`));
    const good = Buffer.from(sdkFrame(jpeg(70 * 1024), 1280, 800));
    agree(good);
    assert.equal(isCanonicalFrame(good), true);
    const dataEnd = good.indexOf(0x22, 25);
    for (const at of [21, 25, 26, 40, 21 + 65535, 21 + 65536, 21 + 65537, 21 + 65550, dataEnd - 3, dataEnd - 2, dataEnd - 1]) {
      for (const byte of [0x3d, 0x2d, 0x5f, 0x80, 0xff, 0x00, 0x20, 0x40, 0x5b, 0x60, 0x7b, 0x2a, 0x2e, 0x3a]) {
        const b = Buffer.from(good);
        b[at] = byte;
        agree(b);
      }
    }
  });
});

describe('the base64 alphabet check', () => {
  it('runs on WebAssembly SIMD here (else the byte loop would be compared with itself)', () => {
    assert.equal(base64AlphabetUsesSimd, true);
  });

  it('answers as the byte loop for every byte value in every lane, at every offset and length', () => {
    for (let byte = 0; byte < 256; byte++) {
      for (let at = 0; at < 48; at++) {
        const b = Buffer.alloc(48, 0x2f);
        b[at] = byte;
        for (const [start, end] of [[0, 48], [at, at + 1], [Math.max(0, at - 17), 48], [0, at], [3, 37]] as const) {
          assert.equal(isBase64Alphabet(b, start, end), isBase64AlphabetLoop(b, start, end), `byte ${byte} at ${at} in [${start}, ${end})`);
        }
      }
    }
  });

  it('answers as the byte loop on random and long inputs', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(), fc.nat(), (u, a, b) => {
      const raw = Buffer.from(u);
      const [start, end] = [Math.min(a, b) % (raw.length + 1), Math.max(a, b) % (raw.length + 1)];
      assert.equal(isBase64Alphabet(raw, start, end), isBase64AlphabetLoop(raw, start, end));
    }), { numRuns: 2000 });
    // Long runs of the alphabet with at most one stray byte anywhere.
    fc.assert(fc.property(fc.integer({ min: 0, max: 200_000 }), fc.constantFrom(...B64), fc.nat(), fc.integer({ min: -1, max: 255 }), fc.nat({ max: 40 }), (length, fill, at, byte, cut) => {
      const bytes = Buffer.alloc(length, fill);
      if (length > 0 && byte >= 0) bytes[at % length] = byte;
      const start = Math.min(cut, length);
      assert.equal(isBase64Alphabet(bytes, start, length), isBase64AlphabetLoop(bytes, start, length));
    }), { numRuns: 300 });
  });
});
