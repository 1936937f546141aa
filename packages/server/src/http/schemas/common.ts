import { Type, type StringOptions, type TSchema, type TString } from '@sinclair/typebox';
import { READABLE_FORMATS } from '../../domain/readable-text.ts';

/** Error bodies of decisions §10, for the OpenAPI description. */
export const ErrorBody = Type.Object({ detail: Type.String() }, { additionalProperties: true, description: 'Error: `detail` says what went wrong and what to do.' });
export const ValidationErrorBody = Type.Object(
  { detail: Type.Array(Type.Object({ loc: Type.Array(Type.Union([Type.String(), Type.Number()])), msg: Type.String(), type: Type.String() })) },
  { description: 'Malformed request: each item names the field (`loc`), the problem (`msg`) and its kind (`type`).' },
);

/** Standard error responses, merged into each route's `response`. */
export function withErrors<T extends Record<number, TSchema>>(ok: T, ...codes: number[]): T & Record<number, TSchema> {
  const out: Record<number, TSchema> = { ...ok, 422: ValidationErrorBody };
  for (const c of codes) out[c] = ErrorBody;
  return out as T & Record<number, TSchema>;
}

export const IdParam = <K extends string>(name: K, prefix: string) =>
  Type.Object({ [name]: Type.String({ maxLength: 64, description: `id (prefix \`${prefix}_\`)` }) } as Record<K, TString>);

/**
 * A string a person reads as one line (a name, a title) or as lines (a note): refused with 422 when
 * it holds invisible or control characters that could make it read otherwise (domain/readable-text.ts).
 */
export const ReadableLine = (options: StringOptions = {}) => Type.String({ ...options, format: READABLE_FORMATS.line });
export const ReadableText = (options: StringOptions = {}) => Type.String({ ...options, format: READABLE_FORMATS.text });

export const Email = Type.String({ minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+$' });
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC' });
