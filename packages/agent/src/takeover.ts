// Take-overs from the agent's side (decisions §21): ask the owner to steer the browser, stream
// JPEG frames to the owner's page over the relay WebSocket, and receive the owner's clicks, text,
// keys and scrolls. The relay token travels only in the Authorization header (never in the URL), so
// the WebSocket implementation must let us set headers: Node's `ws` package does
// (`import { WebSocket } from 'ws'`, passed as `WebSocket`).

/** What the owner sends (decisions §21). */
export type TakeoverCommand =
  | { t: 'live' }
  | { t: 'click'; x: number; y: number }
  | { t: 'set'; value: string }
  | { t: 'text'; text: string }
  | { t: 'key'; key: 'Enter' | 'Backspace' | 'Tab' | 'Escape' | 'ArrowUp' | 'ArrowDown' | 'ArrowLeft' | 'ArrowRight' }
  | { t: 'scroll'; dy: number };

/** How a take-over ended. */
export type TakeoverEnd = 'done' | 'cancelled' | 'expired' | 'agent_left' | 'closed';

/** One screenshot: JPEG bytes and the page size they show (clicks come back in these coordinates). */
export interface TakeoverFrame {
  jpeg: Uint8Array;
  w: number;
  h: number;
}

/** The part of a `ws`-style WebSocket this client uses. */
export interface HeaderWebSocket {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  on(event: 'open', listener: () => void): unknown;
  on(event: 'message', listener: (data: { toString(): string }) => void): unknown;
  on(event: 'close', listener: (code: number, reason: { toString(): string }) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
}
export type HeaderWebSocketClass = new (url: string, options: { headers: Record<string, string> }) => HeaderWebSocket;

export interface TakeoverStreamOptions {
  /** The service URL (as the agent uses it), the session and its token from `requestTakeover`. */
  serviceUrl: string;
  takeoverId: string;
  agentToken: string;
  WebSocket: HeaderWebSocketClass;
  /** Takes a screenshot; called about `fps` times a second while the owner is connected. */
  frame: () => Promise<TakeoverFrame | undefined>;
  /** Carries out what the owner asked (click at x, y in frame coordinates; type; press a key; scroll). */
  onCommand: (command: TakeoverCommand) => void | Promise<void>;
  /** Frames per second (default 4, at most 10). */
  fps?: number;
}

export interface TakeoverStream {
  /** Tells the owner the page moved. */
  url(url: string): void;
  /** Tells the owner which field has the focus. */
  focus(field: string): void;
  /** Hands control back: the owner's page says so, and the session ends. */
  done(): void;
  /** Resolves with how the session ended. */
  readonly ended: Promise<TakeoverEnd>;
}

const ENDS = new Set(['done', 'cancelled', 'expired', 'agent_left']);

/** Opens the agent's end of the relay and streams frames until the session ends. */
export function streamTakeover(opts: TakeoverStreamOptions): Promise<TakeoverStream> {
  const base = new URL(opts.serviceUrl);
  base.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
  const url = new URL(`/api/v1/takeover/${encodeURIComponent(opts.takeoverId)}/agent`, base).toString();
  const ws = new opts.WebSocket(url, { headers: { authorization: `Bearer ${opts.agentToken}` } });
  const interval = 1000 / Math.min(Math.max(opts.fps ?? 4, 0.2), 10);
  let timer: ReturnType<typeof setInterval> | undefined;
  let busy = false;
  let endedWith: TakeoverEnd | undefined;
  let resolveEnded: (e: TakeoverEnd) => void = () => {};
  const ended = new Promise<TakeoverEnd>((r) => { resolveEnded = r; });
  const send = (m: object) => { if (ws.readyState === 1) ws.send(JSON.stringify(m)); };
  const finish = (e: TakeoverEnd) => {
    if (timer) clearInterval(timer);
    timer = undefined;
    endedWith ??= e;
    resolveEnded(endedWith);
  };
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      const f = await opts.frame();
      if (f) send({ t: 'frame', data: Buffer.from(f.jpeg).toString('base64'), w: f.w, h: f.h });
    } finally {
      busy = false;
    }
  };
  ws.on('message', (data) => {
    let m: { t?: unknown };
    try {
      m = JSON.parse(data.toString()) as { t?: unknown };
    } catch {
      return;
    }
    if (typeof m.t === 'string' && ENDS.has(m.t)) return finish(m.t as TakeoverEnd);
    if (m.t === 'live' && !timer) timer = setInterval(() => void tick().catch(() => undefined), interval);
    void Promise.resolve(opts.onCommand(m as TakeoverCommand)).catch(() => undefined);
  });
  ws.on('close', () => finish('closed'));
  return new Promise((resolve, reject) => {
    ws.on('error', (e) => { finish('closed'); reject(e); });
    ws.on('open', () => resolve({
      url: (u) => send({ t: 'url', url: u }),
      focus: (field) => send({ t: 'focus', field }),
      done: () => send({ t: 'done' }),
      ended,
    }));
  });
}
