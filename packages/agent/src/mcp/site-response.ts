import { MCP_LIMITS } from './limits.ts';
import { capText } from './text-cap.ts';

export type SiteAnswer = { status: number; content_type: string; body: string; truncated: boolean; location?: string };

/**
 * A site's answer as the model gets it: at most 64 kB of body text (the rest is not even read, so a
 * site that streams forever is cut), with `truncated` saying so. Anything shaped like a JWT is
 * removed: every credential of the agent is one (pass, DPoP proof, step-up token, agent JWT), and a
 * site that echoes the request's headers would otherwise hand them to the model.
 */
export async function readSiteAnswer(res: Response): Promise<SiteAnswer> {
  const limit = MCP_LIMITS.resultTextBytes;
  const chunks: Uint8Array[] = [];
  let size = 0;
  let more = false;
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
      if (size > limit) {
        more = true;
        await reader.cancel();
        break;
      }
    }
  }
  const { text, truncated } = capText(Buffer.concat(chunks).toString('utf8'), limit);
  const location = res.headers.get('location');
  return {
    status: res.status,
    content_type: res.headers.get('content-type') ?? '',
    body: removeTokens(text),
    truncated: truncated || more,
    ...(location && res.status >= 300 && res.status < 400 ? { location } : {}),
  };
}

export function removeTokens(text: string): string {
  return text.replace(/eyJ[\w-]{2,}\.[\w-]{2,}\.[\w-]*/g, '[credential removed]');
}

export function describeAnswer(a: SiteAnswer): string {
  const head = `HTTP ${a.status}${a.content_type ? ` (${a.content_type})` : ''}${a.location ? ` -> ${a.location}` : ''}${a.truncated ? `; body cut at ${MCP_LIMITS.resultTextBytes / 1024} kB` : ''}`;
  return a.body ? `${head}\n\n${a.body}` : head;
}
