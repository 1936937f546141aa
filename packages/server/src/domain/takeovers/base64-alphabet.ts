/**
 * "Is every byte of bytes[start, end) one of A-Z a-z 0-9 + /?" without making a string or a decoded
 * copy: the relay asks it of every frame it forwards (about 68 kB of base64 each, thousands a
 * second; bench/takeover-relay.ts). A byte loop in JavaScript costs about 1 ns a byte (70 µs a frame,
 * more than the native decoder it replaces); the same test over 16 bytes at a time in WebAssembly
 * SIMD costs a copy into the module's memory and about 0.15 ns a byte, and allocates nothing.
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
 * The module, in the text format:
 *
 * (module
 *   (memory (export "mem") 1)                       ;; 64 KiB: the bytes are checked a chunk at a time
 *   (func (export "check") (param $n i32) (result i32)  ;; $n: a multiple of 16
 *     (local $i i32) (local $v v128) (local $good v128)
 *     (local.set $good (v128.const i8x16 -1 ...))
 *     (block (loop
 *       (br_if 1 (i32.ge_u (local.get $i) (local.get $n)))
 *       (local.set $v (v128.load (local.get $i)))
 *       ;; a lane is good if (v | 0x20) - 'a' <= 25 (a letter of either case), v - '0' <= 9, v = '+' or v = '/'
 *       (local.set $good (v128.and (local.get $good) (v128.or (v128.or (v128.or
 *         (i8x16.le_u (i8x16.sub (v128.or (local.get $v) (splat 0x20)) (splat 0x61)) (splat 25))
 *         (i8x16.le_u (i8x16.sub (local.get $v) (splat 0x30)) (splat 9)))
 *         (i8x16.eq (local.get $v) (splat 0x2b)))
 *         (i8x16.eq (local.get $v) (splat 0x2f)))))
 *       (local.set $i (i32.add (local.get $i) (i32.const 16)))
 *       (br 0)))
 *     (i8x16.all_true (local.get $good))))
 *
 * Bytes of 0x80 and above fail every test (the subtractions wrap to 0x1f and more), so no lane
 * outside the alphabet is good. Encoded by hand below; the property test in
 * test/relay-frame-check.test.ts holds it to the byte loop on every byte value in every lane.
 */
const SIMD = 0xfd;
const splat = (byte: number): number[] => [SIMD, 0x0c, ...new Array<number>(16).fill(byte)];
const op = { localGet: 0x20, localSet: 0x21, i32Const: 0x41, i32GeU: 0x4f, i32Add: 0x6a, block: 0x02, loop: 0x03, empty: 0x40, brIf: 0x0d, br: 0x0c, end: 0x0b };
const v128 = { load: [SIMD, 0x00, 0x00, 0x00], eq: [SIMD, 0x23], leU: [SIMD, 0x2a], and: [SIMD, 0x4e], or: [SIMD, 0x50], sub: [SIMD, 0x71], allTrue: [SIMD, 0x63] };
const [N, I, V, GOOD] = [0, 1, 2, 3];
const I32 = 0x7f;
const V128 = 0x7b;
const body = [
  2, 1, I32, 2, V128, // locals: $i, then $v and $good
  ...splat(0xff), op.localSet, GOOD,
  op.block, op.empty, op.loop, op.empty,
  op.localGet, I, op.localGet, N, op.i32GeU, op.brIf, 1,
  op.localGet, I, ...v128.load, op.localSet, V,
  op.localGet, V, ...splat(0x20), ...v128.or, ...splat(0x61), ...v128.sub, ...splat(25), ...v128.leU,
  op.localGet, V, ...splat(0x30), ...v128.sub, ...splat(9), ...v128.leU, ...v128.or,
  op.localGet, V, ...splat(0x2b), ...v128.eq, ...v128.or,
  op.localGet, V, ...splat(0x2f), ...v128.eq, ...v128.or,
  op.localGet, GOOD, ...v128.and, op.localSet, GOOD,
  op.localGet, I, op.i32Const, 16, op.i32Add, op.localSet, I,
  op.br, 0, op.end, op.end,
  op.localGet, GOOD, ...v128.allTrue, op.end,
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
