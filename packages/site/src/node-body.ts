import type { IncomingMessage } from 'node:http';

/** The most a node:http route bound to its body reads; a larger body is not JSON this route accepts. */
export const BOUND_BODY_MAX_BYTES = 1024 * 1024;

/** A body read and parsed, or why not: larger than the bound, or not UTF-8 JSON (a failed stream counts as that). */
export type JsonBodyRead = { json: unknown } | { error: 'too_large' | 'not_json' };

/**
 * Reads a request's body (at most `maxBytes`) and parses it as UTF-8 JSON, telling a body that is
 * too large from one that is not JSON, so the caller can answer 413 or 400. The stream is consumed:
 * the parsed value is the caller's to keep.
 */
export function readJsonBodyOrWhy(req: IncomingMessage, maxBytes: number = BOUND_BODY_MAX_BYTES): Promise<JsonBodyRead> {
  if (req.readableEnded) return Promise.resolve({ error: 'not_json' }); // read already: nothing left to parse
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (r: JsonBodyRead) => {
      req.off('data', onData).off('end', onEnd).off('error', onError);
      resolve(r);
    };
    // Past the bound the stream is paused, not destroyed, so the caller can still answer 413 on this connection.
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.pause();
        done({ error: 'too_large' });
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      try {
        done({ json: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks))) as unknown });
      } catch {
        done({ error: 'not_json' });
      }
    };
    const onError = () => done({ error: 'not_json' });
    req.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/**
 * Reads a request's body and parses it as UTF-8 JSON; undefined when it is larger than
 * BOUND_BODY_MAX_BYTES, not JSON, or the stream fails (the caller answers 400). The stream is
 * consumed: the parsed value is the caller's to keep.
 */
export async function readJsonBody(req: IncomingMessage): Promise<{ json: unknown } | undefined> {
  const read = await readJsonBodyOrWhy(req);
  return 'json' in read ? read : undefined;
}
