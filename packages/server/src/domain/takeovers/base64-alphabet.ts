/**
 * "Is every byte of bytes[start, end) one of A-Z a-z 0-9 + /?" without making a string or a decoded
 * copy: the relay asks it of every frame it forwards (about 68 kB of base64 each, thousands a
 * second; bench/takeover-relay.ts). A byte loop in JavaScript costs about 1 ns a byte (70 µs a frame,
 * more than the native decoder it replaces); the same test over 16 bytes at a time in WebAssembly
 * SIMD costs a copy into the module's memory and about 0.15 ns a byte (10-14 µs a frame against
 * 40-48 µs for the string and decoder it replaces), and allocates nothing.
 * Where WebAssembly SIMD is missing (a runtime without it) the byte loop answers, the same way.
 */

const ALPHABET = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') ALPHABET[c.charCodeAt(0)] = 1;

/** The byte loop: the reference, and the answer where the module cannot be built. */
export function isBase64AlphabetLoop(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (ALPHABET[bytes[i]!] === 0) return false;
  return true;
}

/*
 * The module: each byte is split into its high and low nibble, and each nibble looks up (i8x16.swizzle,
 * one instruction for 16 bytes) a set of "this byte is not in the alphabet if ..." bits; a byte is in
 * the alphabet exactly when the two sets share no bit. The classes, by high nibble:
 *   2: '+' 0x2b and '/' 0x2f only     (bit 1: low nibble not b or f)
 *   3: '0'-'9' 0x30-0x39              (bit 2: low nibble above 9)
 *   4, 6: 'A'-'O', 'a'-'o'            (bit 4: low nibble 0)
 *   5, 7: 'P'-'Z', 'p'-'z'            (bit 8: low nibble above a)
 *   anything else (controls, space, 0x80 and above): never (bit 16, set for every low nibble)
 * In the text format:
 *
 * (module
 *   (memory (export "mem") 1)                           ;; 64 KiB: the bytes are checked a chunk at a time
 *   (func (export "check") (param $n i32) (result i32)  ;; $n: a multiple of 16; 1 when every byte is good
 *     (local $i i32) (local $v v128) (local $bad v128) (local $lo v128) (local $hi v128) (local $nibble v128)
 *     (local.set $lo (v128.const i8x16 LOW_CLASSES)) (local.set $hi (v128.const i8x16 HIGH_CLASSES))
 *     (local.set $nibble (v128.const i8x16 0x0f ...))
 *     (block (loop
 *       (br_if 1 (i32.ge_u (local.get $i) (local.get $n)))
 *       (local.set $v (v128.load (local.get $i)))
 *       (local.set $bad (v128.or (local.get $bad) (v128.and
 *         (i8x16.swizzle (local.get $lo) (v128.and (local.get $v) (local.get $nibble)))
 *         (i8x16.swizzle (local.get $hi) (i8x16.shr_u (local.get $v) (i32.const 4))))))
 *       (local.set $i (i32.add (local.get $i) (i32.const 16)))
 *       (br 0)))
 *     (i32.eqz (v128.any_true (local.get $bad)))))
 *
 * Encoded by hand below; the tests in test/relay-frame-check.test.ts hold it to the byte loop on
 * every byte value in every lane.
 */
const LOW_CLASSES: number[] = [];
const HIGH_CLASSES: number[] = [];
for (let n = 0; n < 16; n++) {
  LOW_CLASSES.push((n !== 0xb && n !== 0xf ? 1 : 0) | (n > 9 ? 2 : 0) | (n === 0 ? 4 : 0) | (n > 0xa ? 8 : 0) | 16);
  HIGH_CLASSES.push(n === 2 ? 1 : n === 3 ? 2 : n === 4 || n === 6 ? 4 : n === 5 || n === 7 ? 8 : 16);
}
const SIMD = 0xfd;
const vconst = (bytes: number[]): number[] => [SIMD, 0x0c, ...bytes];
const op = { localGet: 0x20, localSet: 0x21, i32Const: 0x41, i32Eqz: 0x45, i32GeU: 0x4f, i32Add: 0x6a, block: 0x02, loop: 0x03, empty: 0x40, brIf: 0x0d, br: 0x0c, end: 0x0b };
const v128 = { load: [SIMD, 0x00, 0x00, 0x00], swizzle: [SIMD, 0x0e], and: [SIMD, 0x4e], or: [SIMD, 0x50], anyTrue: [SIMD, 0x53], shrU: [SIMD, 0x6d] };
const [N, I, V, BAD, LO, HI, NIBBLE] = [0, 1, 2, 3, 4, 5, 6];
const I32 = 0x7f;
const V128 = 0x7b;
const body = [
  2, 1, I32, 5, V128, // locals: $i, then $v, $bad, $lo, $hi, $nibble
  ...vconst(LOW_CLASSES), op.localSet, LO,
  ...vconst(HIGH_CLASSES), op.localSet, HI,
  ...vconst(new Array<number>(16).fill(0x0f)), op.localSet, NIBBLE,
  op.block, op.empty, op.loop, op.empty,
  op.localGet, I, op.localGet, N, op.i32GeU, op.brIf, 1,
  op.localGet, I, ...v128.load, op.localSet, V,
  op.localGet, LO, op.localGet, V, op.localGet, NIBBLE, ...v128.and, ...v128.swizzle,
  op.localGet, HI, op.localGet, V, op.i32Const, 4, ...v128.shrU, ...v128.swizzle,
  ...v128.and, op.localGet, BAD, ...v128.or, op.localSet, BAD,
  op.localGet, I, op.i32Const, 16, op.i32Add, op.localSet, I,
  op.br, 0, op.end, op.end,
  op.localGet, BAD, ...v128.anyTrue, op.i32Eqz, op.end,
];
const leb = (n: number): number[] => (n < 0x80 ? [n] : [(n & 0x7f) | 0x80, ...leb(n >>> 7)]);
const section = (id: number, content: number[]): number[] => [id, ...leb(content.length), ...content];
const name = (s: string): number[] => [s.length, ...Buffer.from(s)];
const MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [1, 0x60, 1, I32, 1, I32]), // one type: (i32) -> i32
  ...section(3, [1, 0]), // one function of it
  ...section(5, [1, 0, 1]), // one memory, one page
  ...section(7, [2, ...name('mem'), 2, 0, ...name('check'), 0, 0]),
  ...section(10, [1, ...leb(body.length), ...body]),
]);

const CHUNK = 64 * 1024;

function buildSimd(): ((bytes: Buffer, start: number, end: number) => boolean) | undefined {
  let exports: WebAssembly.Exports;
  try {
    exports = new WebAssembly.Instance(new WebAssembly.Module(MODULE)).exports;
  } catch {
    return undefined;
  }
  // The memory never grows, so this view of it stays valid.
  const mem = Buffer.from((exports.mem as WebAssembly.Memory).buffer);
  const check = exports.check as (n: number) => number;
  return (bytes, start, end) => {
    for (let at = start; at < end; at += CHUNK) {
      const len = Math.min(CHUNK, end - at);
      bytes.copy(mem, 0, at, at + len);
      // The module reads 16 bytes at a time: the last few are padded with a good byte.
      const padded = (len + 15) & ~15;
      if (padded > len) mem.fill(0x41, len, padded);
      if (check(padded) !== 1) return false;
    }
    return true;
  };
}

const simd = buildSimd();

/** Whether WebAssembly SIMD answers here (else the byte loop does). */
export const base64AlphabetUsesSimd = simd !== undefined;

/** True when every byte of bytes[start, end) is in the base64 alphabet (no padding, no base64url). */
export const isBase64Alphabet: (bytes: Buffer, start: number, end: number) => boolean = simd ?? isBase64AlphabetLoop;
