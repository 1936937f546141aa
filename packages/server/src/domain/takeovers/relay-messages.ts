/**
 * The relay's messages (decisions §21), checked strictly: exact keys, exact types, bounded sizes.
 * Anything else is refused with a reason and the socket is closed. A frame is never stored: the
 * relay forwards the text it received once it has passed this check.
 */

import { isBase64Alphabet } from './base64-alphabet.ts';

/** Largest WebSocket message, the `maxPayload` of the relay (decisions §21). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/**
 * A frame is dropped, not queued, while this much is still unsent to the owner: a slow phone then
 * sees fewer frames, the newest, rather than a growing delay, and a node holds at most about this
 * much per session (1,000 slow owners: 1 GiB; bench/takeover-relay.ts).
 */
export const MAX_UNSENT_TO_OWNER = 1024 * 1024;
export const MAX_SET_VALUE = 1000;
export const MAX_TEXT = 500;
export const KEYS = ['Enter', 'Backspace', 'Tab', 'Escape', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight'] as const;
/** Closing messages, sent to both ends before the relay closes them. */
export type ClosingReason = 'done' | 'cancelled' | 'expired' | 'agent_left';

export type AgentMessage =
  | { t: 'frame'; data: string; w: number; h: number }
  | { t: 'url'; url: string }
  | { t: 'focus'; field: string }
  | { t: 'done' };

export type OwnerMessage =
  | { t: 'live' }
  | { t: 'click'; x: number; y: number }
  | { t: 'set'; value: string }
  | { t: 'text'; text: string }
  | { t: 'key'; key: (typeof KEYS)[number] }
  | { t: 'scroll'; dy: number };

export type Checked<T> = { ok: true; message: T } | { ok: false; reason: string };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const MAX_SIDE = 10_000;

function parse(text: string): Record<string, unknown> | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'not a JSON object';
  return v as Record<string, unknown>;
}

const keysAre = (m: Record<string, unknown>, keys: string[]): boolean => {
  const k = Object.keys(m);
  return k.length === keys.length && keys.every((x) => Object.hasOwn(m, x));
};
const isInt = (v: unknown, min: number, max: number): v is number => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
const isStr = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max;

const FRAME_HEAD = Buffer.from('{"t":"frame","data":"/9j/');
const W_KEY = Buffer.from('","w":');
const H_KEY = Buffer.from(',"h":');
const QUOTE = 0x22;
const EQUALS = 0x3d;
const CLOSE_BRACE = 0x7d;

/** Whether `bytes` holds `word` at `at` (a byte loop: no subarray, nothing allocated). */
function hasAt(bytes: Buffer, at: number, word: Buffer): boolean {
  if (at + word.length > bytes.length) return false;
  for (let i = 0; i < word.length; i++) if (bytes[at + i] !== word[i]) return false;
  return true;
}

/**
 * A side of the frame at `at`, spelt as JSON.stringify spells an integer from 1 to MAX_SIDE (no sign,
 * no leading zero, at most 5 digits): the index just after it, or -1.
 */
function sideEnd(bytes: Buffer, at: number): number {
  let value = 0;
  let i = at;
  for (; i < bytes.length && i - at < 6; i++) {
    const d = bytes[i]! - 0x30;
    if (d < 0 || d > 9) break;
    if (d === 0 && i === at) return -1;
    value = value * 10 + d;
  }
  return i === at || i - at > 5 || value > MAX_SIDE ? -1 : i;
}

/**
 * The relay's hot path (bench/takeover-relay.ts): a frame spelt as the agent SDK sends it,
 * `{"t":"frame","data":"/9j/…","w":W,"h":H}`, checked on the bytes it arrived in, allocating
 * nothing: the data must be base64 of a length that is a multiple of 4 (the alphabet, then at most
 * two `=`), w and h integers from 1 to MAX_SIDE without leading zeros, nothing else anywhere.
 * Every byte such a frame holds is ASCII, so it is also valid UTF-8. True: a valid frame, to be
 * relayed as received. Undefined: any other spelling (other key order, escapes, unpadded base64,
 * anything invalid), which checkAgentMessage then reads and, if it must, refuses with its reason.
 */
export function isCanonicalFrame(bytes: Buffer): true | undefined {
  if (!hasAt(bytes, 0, FRAME_HEAD)) return undefined;
  const start = FRAME_HEAD.length - 4; // the data, from its "/9j/"
  const end = bytes.indexOf(QUOTE, start);
  if (end < 0 || (end - start) % 4 !== 0) return undefined;
  if (!hasAt(bytes, end, W_KEY)) return undefined;
  const wEnd = sideEnd(bytes, end + W_KEY.length);
  if (wEnd < 0 || !hasAt(bytes, wEnd, H_KEY)) return undefined;
  const hEnd = sideEnd(bytes, wEnd + H_KEY.length);
  if (hEnd < 0 || hEnd !== bytes.length - 1 || bytes[hEnd] !== CLOSE_BRACE) return undefined;
  const padding = bytes[end - 1] !== EQUALS ? 0 : bytes[end - 2] !== EQUALS ? 1 : 2;
  return isBase64Alphabet(bytes, start, end - padding) ? true : undefined;
}

export function checkAgentMessage(text: string): Checked<AgentMessage> {
  const m = parse(text);
  if (typeof m === 'string') return { ok: false, reason: m };
  switch (m.t) {
    case 'frame':
      if (!keysAre(m, ['t', 'data', 'w', 'h'])) return { ok: false, reason: 'frame takes exactly t, data, w, h' };
      if (typeof m.data !== 'string' || m.data.length === 0 || !BASE64.test(m.data)) return { ok: false, reason: 'frame data must be base64 (a JPEG)' };
      // A JPEG starts with FF D8 FF, which is "/9j/" in base64.
      if (!m.data.startsWith('/9j/')) return { ok: false, reason: 'frame data must be a JPEG' };
      if (!isInt(m.w, 1, MAX_SIDE) || !isInt(m.h, 1, MAX_SIDE)) return { ok: false, reason: `w and h must be integers from 1 to ${MAX_SIDE}` };
      return { ok: true, message: { t: 'frame', data: m.data, w: m.w, h: m.h } };
    case 'url':
      if (!keysAre(m, ['t', 'url']) || !isStr(m.url, 2000) || !/^https?:\/\/\S+$/.test(m.url)) return { ok: false, reason: 'url takes exactly t and an http(s) url of at most 2000 characters' };
      return { ok: true, message: { t: 'url', url: m.url } };
    case 'focus':
      if (!keysAre(m, ['t', 'field']) || !isStr(m.field, 200)) return { ok: false, reason: 'focus takes exactly t and field (at most 200 characters)' };
      return { ok: true, message: { t: 'focus', field: m.field } };
    case 'done':
      if (!keysAre(m, ['t'])) return { ok: false, reason: 'done takes only t' };
      return { ok: true, message: { t: 'done' } };
    default:
      return { ok: false, reason: 'unknown message type from the agent' };
  }
}

export function checkOwnerMessage(text: string): Checked<OwnerMessage> {
  const m = parse(text);
  if (typeof m === 'string') return { ok: false, reason: m };
  switch (m.t) {
    case 'live':
      if (!keysAre(m, ['t'])) return { ok: false, reason: 'live takes only t' };
      return { ok: true, message: { t: 'live' } };
    case 'click':
      if (!keysAre(m, ['t', 'x', 'y']) || !isInt(m.x, 0, MAX_SIDE) || !isInt(m.y, 0, MAX_SIDE)) return { ok: false, reason: `click takes exactly t and integer x, y from 0 to ${MAX_SIDE}` };
      return { ok: true, message: { t: 'click', x: m.x, y: m.y } };
    case 'set':
      if (!keysAre(m, ['t', 'value']) || !isStr(m.value, MAX_SET_VALUE)) return { ok: false, reason: `set takes exactly t and value (at most ${MAX_SET_VALUE} characters)` };
      return { ok: true, message: { t: 'set', value: m.value } };
    case 'text':
      if (!keysAre(m, ['t', 'text']) || !isStr(m.text, MAX_TEXT)) return { ok: false, reason: `text takes exactly t and text (at most ${MAX_TEXT} characters)` };
      return { ok: true, message: { t: 'text', text: m.text } };
    case 'key':
      if (!keysAre(m, ['t', 'key']) || !(KEYS as readonly unknown[]).includes(m.key)) return { ok: false, reason: `key takes exactly t and one of ${KEYS.join(', ')}` };
      return { ok: true, message: { t: 'key', key: m.key as (typeof KEYS)[number] } };
    case 'scroll':
      if (!keysAre(m, ['t', 'dy']) || !isInt(m.dy, -100_000, 100_000)) return { ok: false, reason: 'scroll takes exactly t and an integer dy' };
      return { ok: true, message: { t: 'scroll', dy: m.dy } };
    default:
      return { ok: false, reason: 'unknown message type from the owner' };
  }
}
