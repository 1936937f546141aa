import { isObject } from './read-description.ts';

/**
 * The base URL an operation is called at: the first entry of its nearest `servers` list, with server
 * variables set to their defaults, resolved against the description's URL when relative (OpenAPI's
 * rule; no `servers` means `/`). A description read from a file has nothing to resolve against.
 */
export function baseUrl(servers: unknown, descriptionUrl: string | undefined, label: string): URL {
  const first: unknown = Array.isArray(servers) ? servers[0] : undefined;
  const template = isObject(first) && typeof first['url'] === 'string' ? first['url'] : '/';
  const raw = fillVariables(template, isObject(first) ? first['variables'] : undefined, label);
  let url: URL;
  try {
    url = new URL(raw, descriptionUrl);
  } catch {
    throw new Error(
      descriptionUrl === undefined
        ? `${label}: the server URL ${JSON.stringify(raw)} is not absolute and the description is a file: give "servers" an absolute URL, or pass the description's URL instead`
        : `${label}: the server URL ${JSON.stringify(raw)} is not a URL`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${label}: the server URL ${url.href} is not http(s)`);
  url.search = '';
  url.hash = '';
  return url;
}

function fillVariables(template: string, variables: unknown, label: string): string {
  return template.replace(/\{([^}]*)\}/g, (_, name: string) => {
    const variable = isObject(variables) ? variables[name] : undefined;
    const fallback = isObject(variable) ? variable['default'] : undefined;
    if (typeof fallback !== 'string') throw new Error(`${label}: the server URL variable {${name}} has no default`);
    return fallback;
  });
}
