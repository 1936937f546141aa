import { Ajv, type ErrorObject } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { READABLE_FORMATS, UNREADABLE_MESSAGE, isReadable } from '../domain/readable-text.ts';

// Bodies are JSON: a number where a string belongs is an error, never coerced. Query strings,
// path parameters and headers are text by nature, so they are coerced to the declared type.
const strict = new Ajv({ allErrors: true, coerceTypes: false, useDefaults: true, removeAdditional: false, strict: false });
const coercing = new Ajv({ allErrors: true, coerceTypes: 'array', useDefaults: true, removeAdditional: false, strict: false });
// Text a person reads (names, titles, notes): no characters that make it read otherwise (domain/readable-text.ts).
for (const ajv of [strict, coercing]) {
  ajv.addFormat(READABLE_FORMATS.line, { type: 'string', validate: (v: string) => isReadable(v, 'line') });
  ajv.addFormat(READABLE_FORMATS.text, { type: 'string', validate: (v: string) => isReadable(v, 'text') });
}
const READABLE = new Set<unknown>(Object.values(READABLE_FORMATS));

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? strict : coercing).compile(schema as object);

export interface ValidationItem {
  loc: (string | number)[];
  msg: string;
  type: string;
}

const PART_NAMES: Record<string, string> = { querystring: 'query', params: 'path', headers: 'header', body: 'body' };

/** Ajv errors in the 422 shape of decisions §10: `loc` is the part, then the path into it. */
export function toValidationItems(errors: ErrorObject[], part: string): ValidationItem[] {
  return errors.map((e) => {
    const loc: (string | number)[] = [PART_NAMES[part] ?? part];
    for (const seg of e.instancePath.split('/').filter(Boolean)) loc.push(/^\d+$/.test(seg) ? Number(seg) : seg.replace(/~1/g, '/').replace(/~0/g, '~'));
    const params = e.params as Record<string, unknown>;
    if (e.keyword === 'required' && typeof params.missingProperty === 'string') {
      loc.push(params.missingProperty);
      return { loc, msg: 'field required', type: 'missing' };
    }
    if (e.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
      loc.push(params.additionalProperty);
      return { loc, msg: 'extra field not permitted', type: 'extra_forbidden' };
    }
    if (e.keyword === 'format' && READABLE.has(params.format)) return { loc, msg: UNREADABLE_MESSAGE, type: 'unreadable_text' };
    return { loc, msg: e.message ?? 'invalid value', type: e.keyword === 'type' ? `${String(params.type)}_type` : e.keyword };
  });
}
