import { isObject } from './read-description.ts';

/** A schema bigger than this (after expanding shared parts) is refused rather than sent to a model. */
const MAX_NODES = 50_000;

/**
 * A tree copy of a dereferenced schema, safe to serialize and to hand to Ajv:
 * - a schema inside itself (a recursive type) becomes `{}` at the point it recurs;
 * - `$id`/`$schema` are dropped (the copy stands alone; equal ids in two tools would clash in Ajv);
 * - OpenAPI 3.0's boolean `exclusiveMinimum`/`exclusiveMaximum` become JSON Schema's numeric form.
 * The shared objects of the dereferenced description are never modified.
 */
export function copySchema(schema: unknown, dialect: '3.0' | '3.1'): unknown {
  let nodes = 0;
  const onPath = new Set<object>();
  const copy = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null) return value;
    if (++nodes > MAX_NODES) throw new Error(`a schema is larger than ${MAX_NODES} nodes`);
    if (onPath.has(value)) return {};
    onPath.add(value);
    try {
      if (Array.isArray(value)) return value.map(copy);
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        if (k !== '$id' && k !== '$schema') out[k] = copy(v);
      }
      if (dialect === '3.0') numericExclusiveBounds(out);
      return out;
    } finally {
      onPath.delete(value);
    }
  };
  return copy(schema);
}

function numericExclusiveBounds(s: Record<string, unknown>): void {
  for (const [flag, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof s[flag] !== 'boolean') continue;
    if (s[flag] === true && typeof s[bound] === 'number') {
      s[flag] = s[bound];
      delete s[bound];
    } else {
      delete s[flag];
    }
  }
}

/** A copy of `schema` with `description` set when it has none (a parameter's text travels with it). */
export function withDescription(schema: unknown, description: string | undefined): Record<string, unknown> {
  const base = isObject(schema) ? schema : {};
  return description !== undefined && base['description'] === undefined ? { ...base, description } : base;
}
