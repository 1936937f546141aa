import type { ToolInputSchema } from '../site-tool.ts';
import type { Operation, Parameter } from './operations.ts';
import { isObject } from './read-description.ts';
import { copySchema, withDescription } from './schema-copy.ts';

/** Where each argument of a tool goes in the request. */
export interface ArgumentPlan {
  readonly path: readonly Parameter[];
  readonly query: readonly Parameter[];
  readonly body: BodyPlan | undefined;
}

/**
 * A JSON body. Its properties are the tool's top-level arguments (`merged` lists them) when the body
 * is a plain object whose property names clash with no parameter and whose required properties are
 * not optional as a whole; otherwise the whole body is the one argument `body`.
 */
export interface BodyPlan {
  readonly contentType: string;
  readonly required: boolean;
  readonly merged: readonly string[] | undefined;
}

export const BODY_ARGUMENT = 'body';

const JSON_MEDIA_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;.*)?$/i;
// Keywords that make an object schema more than its listed properties: merging would lose them.
const NOT_PLAIN = ['allOf', 'anyOf', 'oneOf', 'not', 'if', 'patternProperties', 'dependentSchemas', 'discriminator'];

/**
 * The tool's input schema and argument plan for an operation: path and query parameters (header and
 * cookie parameters are left to the site's defaults) plus the JSON body. Throws an Error saying why
 * the operation cannot be a tool.
 */
export function toolInput(o: Operation, dialect: '3.0' | '3.1'): { schema: ToolInputSchema; plan: ArgumentPlan } {
  const properties: Record<string, object> = {};
  const required: string[] = [];
  const path = o.parameters.filter((p) => p.in === 'path');
  const query = o.parameters.filter((p) => p.in === 'query');
  for (const p of [...path, ...query]) {
    if (properties[p.name] !== undefined) throw new Error(`the parameter "${p.name}" is both in the path and in the query`);
    properties[p.name] = withDescription(copySchema(p.schema, dialect), p.description);
    if (p.required) required.push(p.name);
  }
  for (const name of o.path.matchAll(/\{([^}]*)\}/g)) {
    if (!path.some((p) => p.name === name[1])) throw new Error(`the path parameter {${name[1]}} is not described`);
  }

  const body = jsonBody(o.op['requestBody']);
  let bodyPlan: BodyPlan | undefined;
  if (body !== undefined) {
    const schema = copySchema(body.schema, dialect);
    const mergeable = isPlainObject(schema) && Object.keys(schema.properties).every((k) => properties[k] === undefined) && (body.required || (schema.required ?? []).length === 0);
    if (mergeable) {
      Object.assign(properties, schema.properties);
      if (body.required) required.push(...(schema.required ?? []));
      bodyPlan = { contentType: body.contentType, required: body.required, merged: Object.keys(schema.properties) };
    } else {
      if (properties[BODY_ARGUMENT] !== undefined) throw new Error(`a parameter is called "${BODY_ARGUMENT}", as the request body would be`);
      properties[BODY_ARGUMENT] = withDescription(schema, body.description ?? 'The JSON request body.');
      if (body.required) required.push(BODY_ARGUMENT);
      bodyPlan = { contentType: body.contentType, required: body.required, merged: undefined };
    }
  }
  return {
    schema: { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false },
    plan: { path, query, body: bodyPlan },
  };
}

function jsonBody(requestBody: unknown): { contentType: string; required: boolean; schema: unknown; description: string | undefined } | undefined {
  if (!isObject(requestBody) || !isObject(requestBody['content'])) return undefined;
  const content = requestBody['content'];
  const required = requestBody['required'] === true;
  const contentType = Object.keys(content).find((t) => JSON_MEDIA_TYPE.test(t));
  if (contentType === undefined) {
    if (required) throw new Error(`its request body is not JSON (${Object.keys(content).join(', ')}); only JSON bodies are supported`);
    return undefined;
  }
  const media = content[contentType];
  return {
    contentType,
    required,
    schema: isObject(media) && media['schema'] !== undefined ? media['schema'] : {},
    description: typeof requestBody['description'] === 'string' ? requestBody['description'] : undefined,
  };
}

function isPlainObject(s: unknown): s is { properties: Record<string, object>; required?: string[] } {
  if (!isObject(s) || !isObject(s['properties'])) return false;
  if (s['type'] !== undefined && s['type'] !== 'object') return false;
  if (s['additionalProperties'] !== undefined && s['additionalProperties'] !== false) return false;
  if (s['required'] !== undefined && !(Array.isArray(s['required']) && s['required'].every((r) => typeof r === 'string'))) return false;
  return NOT_PLAIN.every((k) => s[k] === undefined);
}
