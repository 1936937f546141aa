/**
 * Phone numbers as the service keeps them: E.164 (decisions §14), normalised by libphonenumber-js
 * from what people type (spaces, dashes, brackets, a leading 00 for +). Only full international
 * numbers are taken: the service has no country to assume, and guessing one would send codes to
 * the wrong person.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { badRequest } from '../errors.ts';

export const BAD_PHONE =
  'phone must be a full international number with its country code, such as +1 415 555 0123 or +44 20 7946 0958';

/** The E.164 form of `raw`, or undefined when it is not a valid number. */
export function toE164(raw: string): string | undefined {
  const text = raw.trim().replace(/^00(?=\d)/, '+');
  if (!text.startsWith('+') || text.length > 40 || !/^\+[0-9 ().\-/]+$/.test(text)) return undefined;
  const parsed = parsePhoneNumberFromString(text);
  return parsed?.isValid() ? parsed.number : undefined;
}

/** `toE164` or 400 with a readable detail. */
export function normalizePhone(raw: string): string {
  const e164 = toE164(raw);
  if (e164 === undefined) throw badRequest(BAD_PHONE, { next_step: 'type the number with its country code, starting with +' });
  return e164;
}

/**
 * The number as shown back to its owner (and in notices): country code and last four digits,
 * e.g. `+1 ••• ••• 0123`. Enough to recognise one's number, not enough to read it off a screen.
 */
export function maskPhone(phone: string | null): string | null {
  if (!phone) return null;
  const parsed = parsePhoneNumberFromString(phone);
  const cc = parsed?.countryCallingCode ?? '';
  return `+${cc} ••• ••• ${phone.slice(-4)}`;
}
