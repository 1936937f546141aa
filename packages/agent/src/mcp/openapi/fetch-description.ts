/**
 * Downloads an OpenAPI description the user named with `--openapi <url>`. Done here rather than by the
 * parser because the parser refuses loopback and private addresses outright, and a site on
 * localhost or an intranet is exactly what a user running the agent beside it names.
 */

/** Large public descriptions (GitHub's, Stripe's) are 5 to 15 MB of JSON. */
export const MAX_DESCRIPTION_BYTES = 32 * 1024 * 1024;
const TIMEOUT_MS = 15_000;

export interface FetchedDescription {
  text: string;
  /** The URL the description came from after redirects: relative server URLs resolve against it. */
  url: string;
}

export async function fetchDescription(url: string): Promise<FetchedDescription> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json, application/yaml;q=0.9, */*;q=0.5' }, redirect: 'follow', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (e) {
    throw new Error(`cannot download it (${describeFetchError(e)}); check the URL and that the site is running`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`the site answered HTTP ${res.status}; check the URL`);
  }
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > MAX_DESCRIPTION_BYTES) {
    await res.body?.cancel();
    throw new Error(`it is larger than ${MAX_DESCRIPTION_BYTES / 1024 / 1024} MB`);
  }
  return { text: await readLimited(res), url: res.url || url };
}

async function readLimited(res: Response): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (res.body) {
    for await (const chunk of res.body) {
      size += chunk.byteLength;
      if (size > MAX_DESCRIPTION_BYTES) throw new Error(`it is larger than ${MAX_DESCRIPTION_BYTES / 1024 / 1024} MB`);
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describeFetchError(e: unknown): string {
  if (e instanceof Error && e.name === 'TimeoutError') return `no answer in ${TIMEOUT_MS / 1000} s`;
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : e;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : undefined;
  return code ?? (cause instanceof Error ? cause.message : String(cause));
}
