import { isObject } from './read-description.ts';

/**
 * The `x-mandate` mark of an operation: `{name, scopes, stepup, description}`, every field optional.
 * `x-authyouragent` is read the same (sites written for the original system); `x-mandate` wins when
 * both are there. `true` marks with defaults; `false` keeps the operation out even with
 * `--all-operations` (the site says no agent should call it).
 */
export type Mark =
  | { kind: 'marked'; name?: string; scopes?: string[]; stepup: boolean; description?: string }
  | { kind: 'unmarked' }
  | { kind: 'excluded' };

const EXTENSIONS = ['x-mandate', 'x-authyouragent'] as const;

export function readMark(op: Record<string, unknown>, label: string): Mark {
  const extension = EXTENSIONS.find((x) => op[x] !== undefined);
  if (extension === undefined) return { kind: 'unmarked' };
  const value = op[extension];
  if (value === false) return { kind: 'excluded' };
  if (value === true) return { kind: 'marked', stepup: false };
  const bad = (why: string) => new Error(`${label}: ${extension} ${why}`);
  if (!isObject(value)) throw bad('must be an object {name, scopes, stepup, description}, true or false');
  const { name, scopes, stepup, description } = value;
  if (name !== undefined && typeof name !== 'string') throw bad('"name" must be a string');
  if (scopes !== undefined && !(Array.isArray(scopes) && scopes.length > 0 && scopes.every((s) => typeof s === 'string' && s.length > 0))) {
    throw bad('"scopes" must be a non-empty list of scope names');
  }
  if (stepup !== undefined && typeof stepup !== 'boolean') throw bad('"stepup" must be true or false');
  if (description !== undefined && typeof description !== 'string') throw bad('"description" must be a string');
  return {
    kind: 'marked',
    stepup: stepup === true,
    ...(name !== undefined ? { name } : {}),
    ...(scopes !== undefined ? { scopes: scopes as string[] } : {}),
    ...(description !== undefined ? { description } : {}),
  };
}

/** The scope asked for an operation that does not name its own: by what the method does. */
export function guessScope(method: string): string {
  switch (method) {
    case 'POST':
    case 'PUT':
    case 'PATCH':
      return 'write';
    case 'DELETE':
      return 'delete';
    default:
      return 'read';
  }
}
