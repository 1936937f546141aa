import type { FastifyInstance } from 'fastify';

/** Deeper than any body of the API needs; deeper bodies are refused before anything walks them. */
export const MAX_JSON_DEPTH = 32;

type Problem = { nulAt: (string | number)[] } | { tooDeep: true };

/**
 * Where a NUL character sits in a parsed JSON value, or whether it nests deeper than
 * MAX_JSON_DEPTH. Walks with its own stack: a body of thousands of nested arrays must get a 4xx,
 * not overflow the call stack.
 */
function findProblem(root: unknown): Problem | undefined {
  const stack: { value: unknown; path: (string | number)[] }[] = [{ value: root, path: [] }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { value, path } = item;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return { nulAt: path };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (path.length >= MAX_JSON_DEPTH) return { tooDeep: true };
    // Pushed in reverse, so the first NUL in document order is the one reported.
    const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
    for (const [key] of entries) if (typeof key === 'string' && key.includes('\u0000')) return { nulAt: [...path, key] };
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, v] = entries[i] as [string | number, unknown];
      stack.push({ value: v, path: [...path, key] });
    }
  }
  return undefined;
}

/** Only whitespace (or nothing). Most bodies start with `{`: no copy of them is made to find out. */
function isBlank(text: string): boolean {
  return text.length === 0 || (/^\s/.test(text) && text.trim() === '');
}

/**
 * The common body (an object of strings, numbers, booleans and nulls, like every verify call) has
 * no problem when no key or string holds a NUL: that is checked without building paths. Anything
 * else, or a NUL found, goes to the full walk, which says where.
 */
function isFlatAndClean(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    if (key.includes('\u0000')) return false;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return false;
    } else if (v !== null && typeof v === 'object') return false;
  }
  return true;
}

function badJson(message: string): Error {
  const err = new Error(message) as Error & { statusCode?: number; code?: string };
  err.statusCode = 400;
  err.code = 'FST_ERR_CTP_INVALID_JSON_BODY';
  return err;
}

/**
 * JSON bodies, with one relaxation: an empty body is "no body" rather than an error, so that
 * endpoints whose body is optional accept a bare POST. Endpoints that need a body say so in their
 * schema and answer 422. A NUL character anywhere in the body is refused here (422): no field has a
 * use for it and PostgreSQL cannot store it in text. So is nesting deeper than MAX_JSON_DEPTH.
 */
export function installJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json$/, { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (isBlank(text)) return done(null, undefined);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      return done(badJson((e as Error).message), undefined);
    }
    const problem = isFlatAndClean(value) ? undefined : findProblem(value);
    if (problem && 'tooDeep' in problem) return done(badJson(`nested deeper than ${MAX_JSON_DEPTH} levels`), undefined);
    if (problem) return done(badJson(`NUL character (\\u0000) at ${['body', ...problem.nulAt].join('.')}; it is not allowed anywhere`), undefined);
    done(null, value);
  });
}

/** Query strings and path parameters with a NUL character get 422 before any route sees them. */
export function installNulGuard(app: FastifyInstance): void {
  app.addHook('preValidation', (request, reply, done) => {
    for (const [part, values] of [['query', request.query], ['path', request.params]] as const) {
      if (!values || typeof values !== 'object') continue;
      for (const key in values) {
        const v = (values as Record<string, unknown>)[key];
        const strings = Array.isArray(v) ? v : [v];
        if (strings.some((s) => typeof s === 'string' && s.includes('\u0000'))) {
          // Answered here: done() is not called, so the route does not run.
          void reply.code(422).send({ detail: [{ loc: [part, key], msg: 'NUL character (\\u0000) is not allowed', type: 'string_pattern_mismatch' }] });
          return;
        }
      }
    }
    done();
  });
}
