/**
 * Parses a URL the SDK will send requests to, accepting only http(s). Each caller keeps its own error
 * class (the service URL is a programming mistake, a site URL is bad input) and its own scheme rule.
 */
export function parseHttpUrl(url: string, schemeRule: string, makeError: (message: string) => Error): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw makeError(`not a URL: ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw makeError(`${schemeRule}: ${url}`);
  return parsed;
}
