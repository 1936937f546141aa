/** Small runtime type guards for JSON decoded from untrusted tokens. */

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/** NumericDate and counters: we only ever mint integers, so anything else is refused. */
export function isInt(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

export function isNonNegativeInt(value: unknown): value is number {
  return isInt(value) && value >= 0;
}

export function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

export function isStringRecord(value: unknown): value is Record<string, string> {
  return isObject(value) && Object.values(value).every((v) => typeof v === 'string');
}
