/**
 * Unicode format characters (general category Cf: bidi overrides and isolates, zero-width spaces and
 * joiners, soft hyphens, the byte-order mark, tags) in text a person reads to decide: a site's
 * `binding_message` and an OIDC client's name. They are invisible, and a bidi override can make the
 * owner read "Real Shop" where the text says something else, so such text is refused, not cleaned.
 * Emoji stay allowed: a zero-width joiner between two pictographs (👩‍💻, 👨‍👩‍👧, ❤️‍🔥) and the tag
 * sequence of a subdivision flag (🏴 + tags + cancel tag).
 *
 * Local to the OIDC provider for now; the shared helper domain/readable-text.ts replaces it.
 */

/** A pictograph (with its variation selector or skin tone) followed by a ZWJ and another pictograph. */
const EMOJI_ZWJ = /(\p{Extended_Pictographic}[\u{FE0F}\u{1F3FB}-\u{1F3FF}]?)\u{200D}(?=\p{Extended_Pictographic})/gu;
/** A subdivision flag: black flag, tag letters or digits, cancel tag. */
const TAG_FLAG = /\u{1F3F4}[\u{E0030}-\u{E0039}\u{E0061}-\u{E007A}]{1,6}\u{E007F}/gu;
const FORMAT = /\p{Cf}/u;

/** The first format character of `text` outside an emoji sequence, as `U+XXXX`; undefined when none. */
export function formatCharacterIn(text: string): string | undefined {
  const rest = text.replace(TAG_FLAG, '').replace(EMOJI_ZWJ, '$1');
  const found = FORMAT.exec(rest)?.[0];
  return found === undefined ? undefined : `U+${(found.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Why `field` is refused, or null when it holds no format character. */
export function formatCharacterProblem(field: string, text: string): string | null {
  const found = formatCharacterIn(text);
  if (found === undefined) return null;
  return `${field} must not contain invisible formatting characters (it holds ${found}): bidi overrides and zero-width characters make the text read differently from what it says`;
}
