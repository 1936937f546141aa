import { request } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';

/** One Server-Sent Event as read off the wire (`comment` for a `:` line). */
export interface SseEvent {
  event?: string;
  id?: string;
  data?: string;
  comment?: string;
  /** performance.now() when the event's end arrived (the bench measures arrival). */
  at: number;
}

/**
 * A real SSE client over node:http: connects to `url` and parses the events as they come (text/event-stream
 * framing: fields per line, an empty line ends an event). For the revocation stream's tests.
 */
export class SseClient {
  readonly events: SseEvent[] = [];
  status = 0;
  headers: IncomingMessage['headers'] = {};
  ended = false;
  private buffer = '';
  private res: IncomingMessage | undefined;
  private readonly req;
  readonly opened: Promise<void>;

  /** `localAddress`: the source address to connect from (any 127.x.y.z is local on Linux: a second client address). */
  constructor(url: string, headers: Record<string, string> = {}, opts: { localAddress?: string } = {}) {
    let opened!: () => void;
    let failed!: (e: Error) => void;
    this.opened = new Promise((resolve, reject) => {
      opened = resolve;
      failed = reject;
    });
    this.req = request(url, { headers: { accept: 'text/event-stream', ...headers }, agent: false, ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) });
    this.req.on('response', (res) => {
      this.res = res;
      this.status = res.statusCode ?? 0;
      this.headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => this.feed(chunk));
      res.on('end', () => { this.ended = true; });
      res.on('close', () => { this.ended = true; });
      res.on('error', () => { this.ended = true; });
      opened();
    });
    this.req.on('error', (e) => {
      this.ended = true;
      failed(e);
    });
    this.req.end();
  }

  /** The events other than comments. */
  named(name: string): SseEvent[] {
    return this.events.filter((e) => e.event === name);
  }

  /** What the client got so far, and whether its stream ended: for a wait's timeout message. */
  summary(): string {
    return `${this.ended ? 'dropped' : 'connected'}, got: ${this.events.map((e) => e.event ?? 'keep-alive').join(', ')}`;
  }

  /** Stops reading (the bytes sent wait in the socket buffers, then unsent at the server) until resume(). */
  pause(): void {
    this.res?.pause();
  }

  resume(): void {
    this.res?.resume();
  }

  close(): void {
    this.req.destroy();
    this.res?.destroy();
  }

  private feed(chunk: string): void {
    // Searched from where the last search ended: an event of MBs comes in many chunks.
    const from = Math.max(0, this.buffer.length - 1);
    this.buffer += chunk;
    let start = from;
    for (;;) {
      const end = this.buffer.indexOf('\n\n', start);
      start = 0;
      if (end < 0) return;
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const e: SseEvent = { at: performance.now() };
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) e.comment = line.slice(1).trim();
        else {
          const colon = line.indexOf(':');
          const field = line.slice(0, colon);
          const value = line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event' || field === 'id') e[field] = value;
          else if (field === 'data') e.data = e.data === undefined ? value : `${e.data}\n${value}`;
        }
      }
      this.events.push(e);
    }
  }
}
