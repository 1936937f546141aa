/**
 * A Server-Sent Events parser (the WHATWG event-stream format), just what the revocation stream needs:
 * `event`, `id` and `data` fields, comment lines (the keep-alive), events dispatched on a blank line.
 * `retry` is ignored: the reconnect delay is ours (backoff with jitter), not the server's.
 * Fed text as it arrives; a line longer than `maxLineLength` throws, so a server that never ends a
 * line cannot make us hold an unbounded buffer.
 */

export type SseEvent = { event: string; id: string | undefined; data: string };

export type SseHandlers = {
  event(e: SseEvent): void;
  /** A comment line (`: ...`): the server is alive. */
  comment(): void;
};

export class SseLineTooLongError extends Error {
  constructor(max: number) {
    super(`the event stream sent a line longer than ${max} characters`);
    this.name = 'SseLineTooLongError';
  }
}

export class SseParser {
  private buffer = '';
  /** A `\r` ended the last chunk: a `\n` opening the next one belongs to it. */
  private pendingCr = false;
  private eventType = '';
  private data: string[] = [];
  private id: string | undefined;
  private sawField = false;

  constructor(
    private readonly handlers: SseHandlers,
    private readonly maxLineLength: number,
  ) {}

  /** Parses a chunk of decoded text; complete events are dispatched before this returns. */
  push(chunk: string): void {
    let text = chunk;
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.buffer + text.slice(start, i);
      this.buffer = '';
      if (line.length > this.maxLineLength) throw new SseLineTooLongError(this.maxLineLength);
      this.line(line);
      if (c === 13) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 10) i++;
        } else this.pendingCr = true;
      }
      start = i + 1;
    }
    this.buffer += text.slice(start);
    if (this.buffer.length > this.maxLineLength) throw new SseLineTooLongError(this.maxLineLength);
  }

  private line(line: string): void {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return this.handlers.comment();
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.data.push(value);
        this.sawField = true;
        break;
      case 'id':
        if (!value.includes('\u0000')) this.id = value;
        break;
      default: // retry and unknown fields: ignored, as the format says
    }
  }

  private dispatch(): void {
    const event: SseEvent = { event: this.eventType === '' ? 'message' : this.eventType, id: this.id, data: this.data.join('\n') };
    const send = this.sawField;
    this.eventType = '';
    this.data = [];
    this.sawField = false;
    if (send) this.handlers.event(event);
  }
}
