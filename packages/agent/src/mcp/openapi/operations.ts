import { type Description, isObject } from './read-description.ts';

/** HTTP methods an operation can have (TRACE left out: a debugging method no agent should need). */
const METHODS: ReadonlySet<string> = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

export interface Parameter {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header' | 'cookie';
  readonly required: boolean;
  readonly description: string | undefined;
  readonly schema: unknown;
  readonly style: string | undefined;
  readonly explode: boolean | undefined;
}

export interface Operation {
  /** Upper case, as sent. */
  readonly method: string;
  /** The path template, e.g. `/orders/{id}`. */
  readonly path: string;
  readonly op: Record<string, unknown>;
  /** Path-level parameters with the operation's own (which win on the same name and location). */
  readonly parameters: readonly Parameter[];
  /** The nearest `servers` list: the operation's, else its path's, else the description's. */
  readonly servers: unknown;
  /** "GET /orders/{id} in <source>": how errors name it. */
  readonly label: string;
}

/** Every operation of the description, in document order. Throws on a structure that is not OpenAPI. */
export function listOperations(d: Description): Operation[] {
  const paths = d.doc['paths'] ?? {};
  if (!isObject(paths)) throw new Error(`--openapi ${d.source}: "paths" is not an object`);
  const found: Operation[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.has(method) || !isObject(op)) continue;
      const label = `${method.toUpperCase()} ${path} in ${d.source}`;
      found.push({
        method: method.toUpperCase(),
        path,
        op,
        parameters: mergeParameters(readParameters(item['parameters'], label), readParameters(op['parameters'], label)),
        servers: op['servers'] ?? item['servers'] ?? d.doc['servers'],
        label,
      });
    }
  }
  return found;
}

function readParameters(list: unknown, label: string): Parameter[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new Error(`${label}: "parameters" is not a list`);
  return list.map((p: unknown) => {
    if (!isObject(p) || typeof p['name'] !== 'string' || !['path', 'query', 'header', 'cookie'].includes(p['in'] as string)) {
      throw new Error(`${label}: a parameter without a name or a valid "in"`);
    }
    return {
      name: p['name'],
      in: p['in'] as Parameter['in'],
      required: p['in'] === 'path' || p['required'] === true,
      description: typeof p['description'] === 'string' ? p['description'] : undefined,
      schema: parameterSchema(p),
      style: typeof p['style'] === 'string' ? p['style'] : undefined,
      explode: typeof p['explode'] === 'boolean' ? p['explode'] : undefined,
    };
  });
}

// A parameter has a `schema`, or (rarely) a `content` map with one media type holding it.
function parameterSchema(p: Record<string, unknown>): unknown {
  if (p['schema'] !== undefined) return p['schema'];
  const content = p['content'];
  const first = isObject(content) ? Object.values(content)[0] : undefined;
  return isObject(first) && first['schema'] !== undefined ? first['schema'] : {};
}

function mergeParameters(pathLevel: Parameter[], own: Parameter[]): Parameter[] {
  const key = (p: Parameter) => `${p.in}:${p.name}`;
  const overridden = new Set(own.map(key));
  return [...pathLevel.filter((p) => !overridden.has(key(p))), ...own];
}
