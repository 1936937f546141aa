import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { checkAgentMessage, isCanonicalFrame } from '../src/domain/takeovers/relay-messages.ts';

// The relay's fast frame check (isCanonicalFrame) must never let through what the full check
// (checkAgentMessage) refuses: it may only say "valid" or "read it the long way".

const jpeg = (n: number): string => Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), randomBytes(n)]).toString('base64');
const sdkFrame = (data: string, w = 1280, h = 800): string => JSON.stringify({ t: 'frame', data, w, h });
const fast = (text: string): true | undefined => isCanonicalFrame(Buffer.from(text, 'utf8'));

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
      (bytes) => {
        if (isCanonicalFrame(bytes)) assert.equal(checkAgentMessage(bytes.toString('utf8')).ok, true, bytes.toString('latin1').slice(0, 120));
      },
    ), { numRuns: 3000 });
  });
});
