/**
 * Text digests for plans (decisions §20). An agent that submits a plan step with `texts`, and later
 * asks for an approval with `text_digests`, must compute the very same digest as the service, so the
 * normalisation lives here, shared by the server and the SDKs (node:crypto only).
 *
 * Normalisation, in this order:
 *  1. line endings unified: CR LF, CR, NEL (U+0085), LINE SEPARATOR (U+2028) and PARAGRAPH SEPARATOR
 *     (U+2029) all become LF;
 *  2. control and invisible characters removed: every Cc character except LF (so TAB goes too), every
 *     Cf character (zero-width space/joiners, bidi marks and isolates, soft hyphen, BOM, word joiner,
 *     tag characters...), lone surrogates (Cs), and the characters outside Cf that render as nothing:
 *     combining grapheme joiner U+034F, Hangul fillers U+115F U+1160 U+3164 U+FFA0, Khmer inherent
 *     vowels U+17B4 U+17B5, Mongolian free variation selectors U+180B-U+180F and the variation
 *     selectors U+FE00-U+FE0F and U+E0100-U+E01EF;
 *  3. each line right-trimmed (JavaScript white space, as String.prototype.trimEnd);
 *  4. blank lines dropped;
 *  5. lines joined with LF, no trailing newline.
 * The digest is SHA-256 of the UTF-8 bytes, as lowercase hex.
 *
 * Removal happens before trimming and before blank lines are dropped, so inserting invisible
 * characters anywhere never changes the digest, and normalising twice equals normalising once.
 */
import { createHash } from 'node:crypto';

const LINE_BREAKS = /\r\n|[\r\u0085\u2028\u2029]/g;
const INVISIBLE =
  /[\p{Cc}\p{Cf}\p{Cs}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u3164\uFE00-\uFE0F\uFFA0\u{E0100}-\u{E01EF}]/gu;

/** The normalised form of a text, as decisions §20 defines it. */
export function normalizeText(text: string): string {
  const unified = text.replace(LINE_BREAKS, '\n');
  // LF is a Cc character too: keep it, remove the rest of the set.
  const visible = unified.replace(INVISIBLE, (ch) => (ch === '\n' ? ch : ''));
  return visible
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.length > 0)
    .join('\n');
}

/** SHA-256 (lowercase hex) of the UTF-8 bytes of the normalised text. */
export function textDigest(text: string): string {
  return createHash('sha256').update(normalizeText(text), 'utf8').digest('hex');
}

/** The digests of several texts as a sorted list without repeats: plans compare them as a set. */
export function textDigestSet(texts: readonly string[]): string[] {
  return [...new Set(texts.map(textDigest))].sort();
}

/** True when two digest lists hold the same digests (order and repeats ignored). */
export function sameDigestSet(a: readonly string[], b: readonly string[]): boolean {
  const left = [...new Set(a)].sort();
  const right = [...new Set(b)].sort();
  return left.length === right.length && left.every((d, i) => d === right[i]);
}
