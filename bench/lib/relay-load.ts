import { performance } from 'node:perf_hooks';
import { WebSocket, type RawData } from 'ws';
import { percentile } from './load.ts';

/**
 * The load generator of the take-over relay benchmark (bench/takeover-relay.ts): one agent socket and
 * one owner socket per session, in this process; each agent sends `{t:"frame", data, w, h}` at a
 * fixed rate, each owner notes when each frame arrives. The same code drives the bare `ws` relay and
 * Mandate's, so their figures compare.
 *
 * Which frame arrived: the frame's image data starts with `/9j/` (a JPEG in base64, as the relay
 * checks) and then the session's frame number in 8 hex digits (base64 characters too); the send
 * time of each number is kept here, per session. A relay forwards the text untouched, so the number
 * is read at a fixed offset of the received bytes, without parsing 68 kB of JSON per frame.
 */

export interface RelayEnds {
  agentUrl: string;
  agentHeaders: Record<string, string>;
  ownerUrl: string;
  ownerHeaders: Record<string, string>;
}

export interface LoadShape {
  fps: number;
  /** Bytes of the (pretend) JPEG; base64 makes the frame's text 4/3 of it. */
  frameBytes: number;
  warmupSec: number;
  seconds: number;
}

export interface RelayFigures {
  /** Frames per second the agents' screens produced in the window: sessions x fps. */
  targetPerSec: number;
  /** Frames per second the agents sent in the window (a frame is skipped while the agent's socket is backed up). */
  offeredPerSec: number;
  /** Frames per second that reached the owners in the window. */
  relayedPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Frames sent in the window that never reached their owner (dropped by the relay: its owner was backed up). */
  dropped: number;
  /** Frames the agents did not send in the window because their socket had more than AGENT_MAX_BUFFERED unsent. */
  skipped: number;
  /** Frames not sent because this process (the load generator) came to them late, after a newer one was due. */
  late: number;
  /** CPU time of this process (the load generator) per frame relayed, µs. */
  generatorCpuUs: number;
  windowSec: number;
  errors: number;
  firstError?: string;
}

/**
 * An agent sends a frame only while less than this is still unsent on its socket: a screencast
 * sends the newest frame when the last one went out, rather than queueing a growing delay (and the
 * generator's memory stays bounded when a relay cannot keep up).
 */
const AGENT_MAX_BUFFERED = 512 * 1024;
const PREFIX = '{"t":"frame","data":"/9j/';
const SEQ_AT = PREFIX.length;
const SEQ_DIGITS = 8;
const TICK_MS = 5;
const CONNECT_CONCURRENCY = 50;
const CONNECT_TIMEOUT_MS = 30_000;

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** `{"t":"frame","data":"/9j/<seq><filler>","w":1280,"h":800}` as bytes; the seq digits are written per send. */
function frameTemplate(frameBytes: number): Buffer {
  // The image data ("/9j/", the number, the filler) is as long as the base64 of frameBytes.
  const fillerLength = Math.max(0, 4 * Math.ceil(frameBytes / 3) - '/9j/'.length - SEQ_DIGITS);
  const filler = Array.from({ length: fillerLength }, (_, i) => BASE64[(i * 7919) % 64]).join('');
  return Buffer.from(`${PREFIX}${'0'.repeat(SEQ_DIGITS)}${filler}","w":1280,"h":800}`, 'latin1');
}

interface Session {
  agent: WebSocket;
  owner: WebSocket;
  /** performance.now() at each frame's send, by frame number. */
  sentAt: number[];
  nextDueMs: number;
}

interface Counters {
  target: number;
  offered: number;
  skipped: number;
  late: number;
  relayed: number;
}

/** Connected sessions, ready for a load run. */
export class RelaySessions {
  private errors = 0;
  private firstError: string | undefined;
  private closing = false;
  private constructor(private readonly sessions: Session[]) {}

  /** Opens every session's agent socket, then its owner socket, and waits for `{"t":"live"}` at the agent. */
  static async connect(ends: readonly RelayEnds[]): Promise<RelaySessions> {
    const sessions: Session[] = new Array(ends.length);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < ends.length; i = next++) {
        const e = ends[i]!;
        const agent = await open(e.agentUrl, e.agentHeaders);
        const live = new Promise<void>((resolve) => agent.on('message', (d) => { if (String(d) === '{"t":"live"}') resolve(); }));
        const owner = await open(e.ownerUrl, e.ownerHeaders);
        await withTimeout(live, `session ${i}: no {"t":"live"} at the agent`);
        sessions[i] = { agent, owner, sentAt: [], nextDueMs: 0 };
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONNECT_CONCURRENCY, ends.length) }, worker));
    const connected = new RelaySessions(sessions);
    for (const s of sessions) connected.watch(s);
    return connected;
  }

  private fail(why: string): void {
    this.errors++;
    this.firstError ??= why;
  }

  private watch(s: Session): void {
    for (const [who, ws] of [['agent', s.agent], ['owner', s.owner]] as const) {
      ws.on('error', (e) => this.fail(`${who} socket: ${e.message}`));
      ws.on('close', (code, reason) => { if (!this.closing) this.fail(`${who} socket closed during the run: ${code} ${reason.toString()}`); });
    }
  }

  /** Sends frames for warm-up + window, then waits for the window's frames to arrive (or stop arriving). */
  async run(shape: LoadShape, hooks: { atWindowStart(): void; atWindowEnd(): void }): Promise<RelayFigures> {
    const periodMs = 1000 / shape.fps;
    const template = frameTemplate(shape.frameBytes);
    let windowStart = Infinity;
    let windowEnd = Infinity;
    const counters: Counters = { target: 0, offered: 0, skipped: 0, late: 0, relayed: 0 };
    const latencies: number[] = [];
    let receivedOfWindow = 0;
    const listeners: (() => void)[] = [];

    this.sessions.forEach((s, i) => {
      const onFrame = (raw: RawData) => {
        const at = performance.now();
        const data = raw as Buffer; // binaryType 'nodebuffer', the default
        if (data.length < SEQ_AT + SEQ_DIGITS || data.toString('latin1', 0, SEQ_AT) !== PREFIX) {
          if (!this.closing) this.fail(`session ${i}: the owner got something else than a frame: ${data.toString('utf8', 0, 80)}`);
          return;
        }
        const sent = s.sentAt[parseInt(data.toString('latin1', SEQ_AT, SEQ_AT + SEQ_DIGITS), 16)];
        if (sent === undefined) return this.fail(`session ${i}: a frame number that was never sent`);
        if (at >= windowStart && at < windowEnd) counters.relayed++;
        if (sent >= windowStart && sent < windowEnd) {
          receivedOfWindow++;
          latencies.push(at - sent);
        }
      };
      s.owner.on('message', onFrame);
      listeners.push(() => s.owner.off('message', onFrame));
      // Spread over the period, as independent screens would be.
      s.nextDueMs = performance.now() + (i / this.sessions.length) * periodMs;
    });

    const tick = () => {
      const now = performance.now();
      for (const s of this.sessions) {
        let due = 0;
        while (s.nextDueMs <= now) {
          due++;
          s.nextDueMs += periodMs;
        }
        if (due === 0) continue;
        counters.target += due;
        // Frames due while the generator was busy are lost as a screen's would be: the newest is sent.
        counters.late += due - 1;
        if (s.agent.readyState !== WebSocket.OPEN || s.agent.bufferedAmount > AGENT_MAX_BUFFERED) {
          counters.skipped++;
          continue;
        }
        counters.offered++;
        const seq = s.sentAt.length;
        template.write(seq.toString(16).padStart(SEQ_DIGITS, '0'), SEQ_AT, 'latin1');
        s.sentAt.push(now);
        // ws copies a Buffer while masking it (client frames are masked): the template may change after.
        s.agent.send(template, { binary: false });
      }
    };
    const ticker = setInterval(tick, TICK_MS);
    try {
      await sleep(shape.warmupSec * 1000);
      counters.target = counters.offered = counters.skipped = counters.late = counters.relayed = 0;
      hooks.atWindowStart();
      const cpu0 = process.cpuUsage();
      windowStart = performance.now();
      await sleep(shape.seconds * 1000);
      windowEnd = performance.now();
      const cpu = process.cpuUsage(cpu0);
      const inWindow = { ...counters };
      clearInterval(ticker);
      hooks.atWindowEnd();
      // The window's last frames may still be on their way: wait while they keep arriving.
      let seen = -1;
      for (let waited = 0; receivedOfWindow < inWindow.offered && receivedOfWindow !== seen && waited < 30_000; waited += 1000) {
        seen = receivedOfWindow;
        await sleep(1000);
      }
      const seconds = (windowEnd - windowStart) / 1000;
      latencies.sort((a, b) => a - b);
      return {
        targetPerSec: inWindow.target / seconds,
        offeredPerSec: inWindow.offered / seconds,
        relayedPerSec: inWindow.relayed / seconds,
        p50Ms: percentile(latencies, 0.5),
        p99Ms: percentile(latencies, 0.99),
        dropped: inWindow.offered - receivedOfWindow,
        skipped: inWindow.skipped,
        late: inWindow.late,
        generatorCpuUs: (cpu.user + cpu.system) / Math.max(1, inWindow.relayed),
        windowSec: seconds,
        errors: this.errors,
        ...(this.firstError === undefined ? {} : { firstError: this.firstError }),
      };
    } finally {
      clearInterval(ticker);
      for (const off of listeners) off();
    }
  }

  /**
   * Closes the agents' sockets (which ends a Mandate session: `agent_left`) and waits until the relay
   * has closed every owner's; answers how many owners it did not close within 60 s (then cut here).
   */
  async close(): Promise<number> {
    this.closing = true;
    const ownersClosed = this.sessions.map((s) => (s.owner.readyState === WebSocket.CLOSED ? Promise.resolve() : new Promise<void>((r) => s.owner.once('close', () => r()))));
    for (const s of this.sessions) s.agent.close(1000, 'done');
    let left = 0;
    await withTimeout(Promise.all(ownersClosed), 'owners closed', 60_000).catch(() => {});
    for (const s of this.sessions) {
      if (s.owner.readyState !== WebSocket.CLOSED) {
        left++;
        s.owner.terminate();
      }
      s.agent.terminate();
    }
    return left;
  }
}

function open(url: string, headers: Record<string, string>): Promise<WebSocket> {
  // No compression (neither relay offers it), and no UTF-8 check here: the generator's work stays the same for both relays.
  const ws = new WebSocket(url, { headers, perMessageDeflate: false, skipUTF8Validation: true });
  return withTimeout(new Promise<WebSocket>((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`${url}: ${res.statusCode} instead of an upgrade`)));
  }), `${url}: not open`);
}

function withTimeout<T>(p: Promise<T>, what: string, ms = CONNECT_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} after ${ms / 1000} s`)), ms); });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
