import type { IncomingMessage } from 'node:http';

/** The most a node:http route bound to its body reads; a larger body is not JSON this route accepts. */
export const BOUND_BODY_MAX_BYTES = 1024 * 1024;

/**
 * Reads a request's body and parses it as UTF-8 JSON; undefined when it is larger than
 * BOUND_BODY_MAX_BYTES, not JSON, or the stream fails (the caller answers 400). The stream is
 * consumed: the parsed value is the caller's to keep.
 */
export async function readJsonBody(req: IncomingMessage): Promise<{ json: unknown } | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > BOUND_BODY_MAX_BYTES) return undefined;
      chunks.push(buf);
    }
    return { json: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks))) as unknown };
  } catch {
    return undefined;
  }
}
