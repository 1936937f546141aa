import { dereference } from '@readme/openapi-parser';
import { parse as parseYaml } from 'yaml';
import { fetchDescription } from './fetch-description.ts';

/** An OpenAPI 3 description with every `$ref` replaced by what it points to (shared, possibly cyclic objects). */
export interface Description {
  readonly doc: Record<string, unknown>;
  /** What the user passed: names the description in errors. */
  readonly source: string;
  /** The description's own URL, against which relative server URLs resolve; undefined for a file. */
  readonly url: string | undefined;
  /** 3.0 schemas are OpenAPI's JSON Schema dialect; 3.1 and later are JSON Schema 2020-12. */
  readonly dialect: '3.0' | '3.1';
}

export async function readDescription(source: string): Promise<Description> {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(source)?.[1]?.toLowerCase();
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') {
    throw new Error(`--openapi ${source}: only http(s) URLs and file paths can be read`);
  }
  const fail = (why: string) => new Error(`--openapi ${source}: ${why}`);
  let doc: unknown;
  let url: string | undefined;
  try {
    if (scheme === undefined) {
      // A file: the parser reads it (JSON or YAML) and the files its `$ref`s name beside it.
      doc = await dereference(source);
    } else {
      const fetched = await fetchDescription(source);
      url = fetched.url;
      const parsed: unknown = parseYaml(fetched.text); // YAML 1.2 reads JSON too
      if (!isObject(parsed)) throw new Error('it is not an OpenAPI description (not a JSON or YAML object)');
      checkVersion(parsed);
      // No file access for a downloaded description: its relative `$ref`s must not read local files.
      doc = await dereference(parsed as Parameters<typeof dereference>[0], { resolve: { file: false } });
    }
  } catch (e) {
    throw fail(e instanceof Error ? firstLine(e.message) : String(e));
  }
  if (!isObject(doc)) throw fail('it is not an OpenAPI description (not a JSON or YAML object)');
  try {
    return { doc, source, url, dialect: checkVersion(doc) };
  } catch (e) {
    throw fail((e as Error).message);
  }
}

function checkVersion(doc: Record<string, unknown>): '3.0' | '3.1' {
  if (doc['swagger'] !== undefined) {
    throw new Error('Swagger 2.0 is not supported: convert it to OpenAPI 3 (for example with swagger2openapi) and pass that');
  }
  const version = doc['openapi'];
  if (typeof version !== 'string' || !/^3\.\d+(\.\d+)?/.test(version)) {
    throw new Error('it is not an OpenAPI 3 description (no "openapi": "3.x" field)');
  }
  return version.startsWith('3.0') ? '3.0' : '3.1';
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// The parser's messages may carry a code frame of the file; the first line says what is wrong.
function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}
