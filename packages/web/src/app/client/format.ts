// Times, durations and labels as people read them.
import { serverNow } from './api.ts';

export const when = (iso: string | null): string => (iso ? new Date(iso).toLocaleString() : 'never');

export const day = (iso: string): string => new Date(iso).toLocaleDateString();

/**
 * When a revocation takes effect, as the public pages say it: a site that checks each pass with
 * Mandate (cloud mode) refuses at once; one that checks passes itself (local mode) when the next
 * revocation delta reaches it over the revocation stream (decisions §30: under a second), or, while
 * it is not connected to the stream, when it fetches the next signed list, within about a minute.
 */
export const REFUSED_WHEN = "sites that check with Mandate refuse it at once, sites that check passes themselves within a second while connected to Mandate's revocation stream, within a minute otherwise";

/** The text with its first letter in capitals, to begin a sentence. */
export const capital = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** Time left until `expiresAt`, by the server's clock. */
export function timeLeft(expiresAt: string): { text: string; expired: boolean; soon: boolean } {
  const ms = Date.parse(expiresAt) - serverNow();
  if (!(ms > 0)) return { text: 'expired', expired: true, soon: true };
  const s = Math.ceil(ms / 1000);
  const m = Math.floor(s / 60);
  return { text: m > 0 ? `${m} min ${String(s % 60).padStart(2, '0')} s left` : `${s} s left`, expired: false, soon: s <= 60 };
}

/** "5 minutes", "1 day", "90 s". */
export function duration(sec: number): string {
  const units: [number, string][] = [[86400, 'day'], [3600, 'hour'], [60, 'minute']];
  for (const [size, name] of units) {
    if (sec >= size && sec % size === 0) return `${sec / size} ${name}${sec === size ? '' : 's'}`;
  }
  return `${sec} s`;
}

export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

const USER_INFO_LABELS: Record<string, string> = {
  'user:name': 'your name',
  'user:email': 'your email address',
  'user:phone': 'your phone number',
};

/** `user:email` -> "your email address"; unknown names as they are. */
export const userInfoLabel = (name: string): string => USER_INFO_LABELS[name] ?? name;

export const listText = (v: unknown): string => (Array.isArray(v) && v.length ? v.join(', ') : 'nothing');
