import { type ChildProcess, fork } from 'node:child_process';
import type { Socket } from 'node:net';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Clock } from '../clock.ts';
import type { ClosingReason } from '../domain/takeovers/relay-messages.ts';
import type { RelayCoreEvents, RelayRole } from './relay-core.ts';
import type { Handover, RelayEnds, RelayLog } from './relay-ends.ts';
import type { FromRelayProcess, ToRelayProcess } from './relay-protocol.ts';

/** The relay process's entry, beside this file (relay-child.js in the build, .ts under tsx). */
const HERE = fileURLToPath(import.meta.url);
const ENTRY = join(dirname(HERE), `relay-child${extname(HERE)}`);
/** How long a stopping relay process may take to close its ends before it is killed. */
const STOP_WITHIN_MS = 5000;
/** 1011: the relay process died; the ends' sessions ended with it (agent_left). */
const INTERNAL_ERROR = 1011;
const DIED = 'the relay process stopped: take-over interrupted';

/** The headers ws reads to answer a handshake: the end's credentials (Authorization, Cookie) stay in this process. */
const HANDSHAKE_HEADERS = ['upgrade', 'connection', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-protocol', 'sec-websocket-extensions'] as const;

interface Copy {
  socket: Socket;
  id: string;
  role: RelayRole;
}

/**
 * The ends paired in the relay process (relay-child.ts; TAKEOVER_RELAY=process, the default). Each
 * authorized end's socket is handed over before its WebSocket handshake (`child.send` with the
 * handle); this process keeps its own copy of the handle, never reading from it, so that when the
 * relay process dies the ends still get a close frame (1011) with a reason instead of a cut
 * connection. The copy is closed once the relay process reports the socket closed.
 *
 * The relay process is started when the server listens (or with the first end), restarted when it dies (with a growing delay
 * while it keeps dying) and stopped with the service; its failures never reach the service's
 * process beyond the log.
 */
export class ChildEnds implements RelayEnds {
  readonly takes = 'upgrade';
  private child: ChildProcess | undefined;
  private readonly copies = new Map<number, Copy>();
  private readonly asks = new Map<number, { resolve: (u: NodeJS.MemoryUsage) => void; reject: (e: Error) => void }>();
  private nextAsk = 1;
  private stopping = false;
  private deaths: number[] = [];
  private restartTimer: NodeJS.Timeout | undefined;

  constructor(private readonly events: RelayCoreEvents, private readonly clock: Clock, private readonly log: () => RelayLog | undefined, private readonly entry = ENTRY) {}

  /** The relay process's id, once started (tests, bench). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    this.started();
  }

  attach(id: string, role: RelayRole, end: number, expiresAt: number, handover: Handover): void {
    if (!('upgrade' in handover)) throw new Error('the relay process takes ends before their handshake');
    const { socket, head, request } = handover.upgrade;
    // The client left while its upgrade was authorized: that end left.
    if (socket.destroyed) return void process.nextTick(() => this.events.left(id, role, end));
    // A client sends nothing before the handshake's answer, but bytes already read here (the `head`,
    // or anything buffered since) go along, and this process stops reading: the socket's data is the
    // relay process's from now on.
    const read: Buffer[] = [head];
    for (let chunk: unknown; (chunk = socket.read()) !== null;) read.push(chunk as Buffer);
    stopReading(socket);
    // Sent with its `server`, Node would make the HTTP server count the relay process's sockets at
    // close, and once that process has exited the server never closes (net.Server.close polls a list
    // of workers that is then empty). The copies kept here are counted as the server's own sockets.
    (socket as unknown as { server: unknown }).server = null;
    socket.on('error', () => {});
    this.copies.set(end, { socket, id, role });
    const handshake = { ...request, headers: Object.fromEntries(HANDSHAKE_HEADERS.map((h) => [h, request.headers[h]])) };
    const message: ToRelayProcess = { op: 'attach', id, role, end, remainingMs: Math.max(0, expiresAt - this.clock.now()), request: handshake, head: Buffer.concat(read).toString('base64') };
    try {
      this.started().send(message, socket, { keepOpen: true }, (e) => {
        if (e) this.notHandedOver(end, e);
      });
    } catch (e) {
      this.notHandedOver(end, e);
    }
  }

  closeBoth(id: string, reason: ClosingReason): void {
    this.tell({ op: 'closeBoth', id, reason });
  }

  fail(id: string, role: RelayRole): void {
    this.tell({ op: 'fail', id, role });
  }

  drop(id: string): void {
    this.tell({ op: 'drop', id });
  }

  async memory(): Promise<NodeJS.MemoryUsage> {
    const child = this.started();
    const ask = this.nextAsk++;
    return new Promise((resolve, reject) => {
      this.asks.set(ask, { resolve, reject });
      child.send({ op: 'memory', ask } satisfies ToRelayProcess);
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      this.tell({ op: 'stop' });
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_WITHIN_MS);
      await exited;
      clearTimeout(killer);
    }
    for (const { socket } of this.copies.values()) socket.destroy();
    this.copies.clear();
  }

  private started(): ChildProcess {
    if (this.child) return this.child;
    if (this.stopping) throw new Error('the service is stopping');
    const child = fork(this.entry, [], {
      // The service's loader and options (tsx under the tests, --cpu-prof in the bench), not the test runner's or the inspector's.
      execArgv: process.execArgv.filter((a) => !/^--(test|inspect|watch)/.test(a)),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'json',
    });
    this.child = child;
    child.on('message', (m: FromRelayProcess) => this.onEvent(m));
    child.on('error', (e) => {
      this.log()?.warn({ err: e.message }, 'take-over relay process error');
      // A process that could not be started sends no exit: it is treated as one that died.
      if (child.pid === undefined) this.exited(child, null, null);
    });
    child.once('exit', (code, signal) => this.exited(child, code, signal));
    this.log()?.info({ pid: child.pid }, 'take-over relay process started');
    return child;
  }

  private tell(m: ToRelayProcess): void {
    // Without a relay process there is nothing to tell: the sessions it held ended with it.
    if (this.child?.connected) this.child.send(m);
  }

  private onEvent(m: FromRelayProcess): void {
    switch (m.ev) {
      case 'left':
        return this.events.left(m.id, m.role, m.end);
      case 'message':
        return this.events.message(m.id, m.role, m.end, m.type);
      case 'due':
        return this.events.due(m.id, m.role);
      case 'failed':
        return this.events.failed(m.id, m.role, m.error);
      case 'released': {
        this.copies.get(m.end)?.socket.destroy();
        this.copies.delete(m.end);
        return;
      }
      case 'memory': {
        this.asks.get(m.ask)?.resolve(m.usage);
        this.asks.delete(m.ask);
        return;
      }
    }
  }

  /** The handle could not be sent (the relay process is gone): the upgrade is answered 503 here. */
  private notHandedOver(end: number, e: unknown): void {
    const copy = this.copies.get(end);
    if (!copy) return;
    this.copies.delete(end);
    this.log()?.warn({ takeover: copy.id, err: e instanceof Error ? e.message : String(e) }, 'take-over end not handed to the relay process');
    copy.socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    setTimeout(() => copy.socket.destroy(), 1000).unref();
    this.events.left(copy.id, copy.role, end);
  }

  private exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child) return;
    this.child = undefined;
    for (const { reject } of this.asks.values()) reject(new Error('the relay process exited'));
    this.asks.clear();
    if (this.stopping) return;
    const lost = [...this.copies];
    this.copies.clear();
    this.log()?.warn({ code, signal, ends: lost.length }, 'take-over relay process exited: its ends were closed (1011) and their take-overs ended; restarting it');
    // The copies held here still reach the clients: each gets a close frame with the reason.
    for (const [, { socket }] of lost) closeWith(socket, INTERNAL_ERROR, DIED);
    for (const [end, { id, role }] of lost) this.events.left(id, role, end);
    // Restarted at once the first time, then after a delay that doubles with each death within a minute.
    const now = Date.now();
    this.deaths = [...this.deaths.filter((t) => now - t < 60_000), now];
    const delay = this.deaths.length <= 1 ? 0 : Math.min(10_000, 250 * 2 ** (this.deaths.length - 2));
    this.restartTimer = setTimeout(() => {
      try {
        if (!this.stopping) this.started();
      } catch (e) {
        this.log()?.warn({ err: e instanceof Error ? e.message : String(e) }, 'take-over relay process could not be restarted; the next end starts it');
      }
    }, delay);
    this.restartTimer.unref();
  }
}

/**
 * Stops this process reading from `socket`, whose data belongs to the relay process once the handle
 * is sent. Node reads an upgraded socket's handle on (into the stream's buffer) until told
 * otherwise, and a read here would take bytes the relay process never sees. `readStop` is the
 * handle's own call; net.Socket offers no public one for a socket it did not create paused.
 */
function stopReading(socket: Socket): void {
  const handle = (socket as unknown as { _handle?: { readStop?: () => number } })._handle;
  handle?.readStop?.();
}

/** Writes a WebSocket close frame (server to client: unmasked) with `code` and `reason`, then closes the socket. */
function closeWith(socket: Socket, code: number, reason: string): void {
  const text = Buffer.from(reason).subarray(0, 120);
  const frame = Buffer.alloc(4 + text.length);
  frame[0] = 0x88;
  frame[1] = 2 + text.length;
  frame.writeUInt16BE(code, 2);
  text.copy(frame, 4);
  socket.end(frame, () => socket.destroy());
  setTimeout(() => socket.destroy(), 1000).unref();
}
