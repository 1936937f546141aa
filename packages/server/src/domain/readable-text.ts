import { badRequest } from './errors.ts';

/**
 * Text a person reads on a card, a notice or a list (names, titles, notes, binding messages) must
 * read as what was sent. Unicode format characters (category Cf: bidirectional overrides and
 * isolates, zero-width spaces and joiners, tags) reorder or hide what is shown, so "Pay 5 EUR to
 * Alice" could display as something else; control characters and line separators break a line
 * the page lays out as one. Private-use and lone surrogate code points show as nothing useful.
 *
 * Two exceptions keep emoji whole: a zero-width joiner between two pictographs (👩‍💻, ❤️‍🔥) joins
 * them into one picture, and the tag characters of a subdivision flag (🏴 + tags + cancel tag) make
 * that flag; neither hides anything.
 */
export type TextKind = 'line' | 'text';

/** JSON Schema formats (registered with the HTTP validators) for the two kinds. */
export const READABLE_FORMATS = { line: 'readable-line', text: 'readable-text' } as const satisfies Record<TextKind, string>;

const EMOJI_JOINER = /(?<=\p{Extended_Pictographic}[\u{FE0F}\u{1F3FB}-\u{1F3FF}]?)\u200D(?=\p{Extended_Pictographic})/gu;
/** A subdivision flag: black flag, tag letters or digits, cancel tag. */
const TAG_FLAG = /\u{1F3F4}[\u{E0030}-\u{E0039}\u{E0061}-\u{E007A}]{1,6}\u{E007F}/gu;
const UNREADABLE: Record<TextKind, RegExp> = {
  // One line: no control characters at all.
  line: /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}]$/u,
  // Several lines: newlines and tabs are how a note is laid out; other controls are not.
  text: /^(?:[\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}]|[^\P{Cc}\n\r\t])$/u,
};

/** The first character that would make `value` read otherwise, with its position (1-based, in characters), or undefined. */
export function findUnreadable(value: string, kind: TextKind): { position: number; codePoint: string } | undefined {
  // UTF-16 offsets of the format characters that belong to an emoji.
  const allowed = new Set([...value.matchAll(EMOJI_JOINER)].map((m) => m.index));
  for (const flag of value.matchAll(TAG_FLAG)) {
    for (let at = flag.index + 2; at < flag.index + flag[0].length; at += 2) allowed.add(at);
  }
  let position = 0;
  let offset = 0;
  for (const ch of value) {
    position += 1;
    if (UNREADABLE[kind].test(ch) && !allowed.has(offset)) {
      return { position, codePoint: `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}` };
    }
    offset += ch.length;
  }
  return undefined;
}

export function isReadable(value: string, kind: TextKind): boolean {
  return findUnreadable(value, kind) === undefined;
}

/** What the validators say about a value in a readable format. */
export const UNREADABLE_MESSAGE =
  'contains an invisible or control character (a Unicode format character such as a right-to-left override or a zero-width space, a control character or a line separator): it could make the text read otherwise than what was sent; remove it';

/** Why `field` is refused, naming the character and its place; null when it reads as sent. */
export function unreadableProblem(field: string, value: string, kind: TextKind = 'line'): string | null {
  const found = findUnreadable(value, kind);
  return found ? `${field} ${UNREADABLE_MESSAGE} (${found.codePoint} at character ${found.position})` : null;
}

/** 400 naming the field and the character, for text that arrives outside a JSON schema (forms). */
export function requireReadable(field: string, value: string, kind: TextKind = 'line'): string {
  const problem = unreadableProblem(field, value, kind);
  if (problem !== null) throw badRequest(problem);
  return value;
}
