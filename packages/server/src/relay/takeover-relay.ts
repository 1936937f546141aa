import { isUtf8 } from 'node:buffer';
import type { WebSocket, RawData } from 'ws';
import type { TakeoverRecord, TakeoverState } from '../store/ports/index.ts';
import type { Takeovers } from '../domain/takeovers/takeovers.ts';
import { type ClosingReason, MAX_UNSENT_TO_OWNER, checkAgentMessage, checkOwnerMessage, isCanonicalFrame } from '../domain/takeovers/relay-messages.ts';
import { linkToNode } from './node-link.ts';

export type RelayRole = 'agent' | 'owner';

export interface RelayLog {
  info(details: object, message: string): void;
}

export interface RelayOptions {
  /** This node's NODE_INTERNAL_URL; null: one node, every end is paired here. */
  nodeUrl: string | null;
  log?: RelayLog;
  /** How often the sessions held here are checked against the store (an end decided on a node that could not tell this one). */
  checkEveryMs?: number;
}

/** An end's upgrade, as the route saw it: the path and headers a forwarded link repeats. */
export interface RelayUpgrade {
  path: string;
  headers: Record<string, string | string[] | undefined>;
}

interface Pair {
  t: TakeoverRecord;
  agent?: WebSocket;
  owner?: WebSocket;
  timer?: NodeJS.Timeout;
}

/** 1008: policy violation (a message the relay refuses); 4000: replaced by a newer connection of the same end. */
const POLICY = 1008;
const REPLACED = 4000;

/** 1007: a text message that is not valid UTF-8 (RFC 6455 §7.4.1), as ws itself would close it. */
const INVALID_DATA = 1007;
/** The send options of every relayed message, made once. */
const AS_TEXT = { binary: false } as const;

/** Messages an end may send while this node finds where its session is relayed (a few milliseconds). */
const MAX_HELD = 64;
/** Attempts to find the relaying node when it moves meanwhile. */
const ROUTE_ATTEMPTS = 3;
/** 1013: try again later (the relay moved more often than the attempts allow). */
const TRY_AGAIN = 1013;

/** Closes a socket that sent what the relay refuses; a close reason may hold at most 123 bytes. */
const refuse = (ws: WebSocket, reason: string): void => ws.close(POLICY, Buffer.from(reason).subarray(0, 120).toString());

/**
 * The take-over relay (decisions §21): pairs the agent's socket with the owner's, checks every
 * message (domain/takeovers/relay-messages.ts) and forwards the text it received to the other end.
 * Frames live only in memory for as long as the send takes. When the session ends (done, cancelled,
 * expired, agent left) both ends get the closing message and are closed.
 *
 * Across nodes, one node relays each session: the first node an end reaches records itself in the
 * session row (a compare-and-set, so racing nodes agree); an end that reaches another node is
 * forwarded there (relay/node-link.ts). An end decided on another node (a cancel over HTTP) is told
 * to the relaying node (`recheck`), and every node checks the sessions it relays against the store
 * every few seconds, which also catches an account deleted elsewhere.
 */
export class TakeoverRelay {
  private readonly pairs = new Map<string, Pair>();
  /** Forwarded ends on this node: their links to the relaying node (closed when this node stops). */
  private readonly links = new Set<WebSocket>();
  private readonly rechecks = new Map<string, Promise<void>>();
  private readonly checkTimer: NodeJS.Timeout;
  private log: RelayLog | undefined;

  constructor(private readonly takeovers: Takeovers, private readonly options: RelayOptions = { nodeUrl: null }) {
    this.log = options.log;
    takeovers.onEnded((id, state) => this.ended(id, state));
    this.checkTimer = setInterval(() => void this.checkHeld().catch((e: unknown) => this.log?.info({ err: String(e) }, 'take-over check failed')), options.checkEveryMs ?? 10_000);
    this.checkTimer.unref();
  }

  /** The app's log, once it exists (the relay is built before it). */
  attachLog(log: RelayLog): void {
    this.log = log;
  }

  /** Sessions with at least one end on this node (metrics, tests). */
  get size(): number {
    return this.pairs.size;
  }

  /** Ends on this node forwarded to the node relaying their session (tests). */
  get forwarded(): number {
    return this.links.size;
  }

  /**
   * Routes an authorized end: paired here when this node relays the session (or is the only one),
   * else forwarded to the node that does. Messages that arrive meanwhile are held and replayed.
   */
  async connect(t: TakeoverRecord, role: RelayRole, ws: WebSocket, upgrade: RelayUpgrade): Promise<void> {
    const self = this.options.nodeUrl;
    if (self === null) return this.attach(t, role, ws);
    const held: [RawData, boolean][] = [];
    const hold = (data: RawData, isBinary: boolean): void => {
      held.push([data, isBinary]);
      if (held.length > MAX_HELD) refuse(ws, 'too many messages before the relay was ready');
    };
    ws.on('message', hold);
    ws.on('error', () => {});
    const release = (): void => {
      ws.off('message', hold);
    };
    for (let attempt = 0; attempt < ROUTE_ATTEMPTS; attempt++) {
      const node = await this.takeovers.claimRelayNode(t.id, self);
      if (node === undefined) {
        release();
        return ws.close(1000, 'take-over ended');
      }
      if (node === self) return this.attachHeld(t, role, ws, release, held);
      const outcome = await linkToNode(ws, { node, path: upgrade.path, headers: upgrade.headers }, held, (link) => {
        release();
        this.links.add(link);
        link.on('close', () => this.links.delete(link));
      });
      if (outcome === 'linked' || outcome === 'refused') return release();
      if (outcome === 'unreachable' && (await this.takeovers.moveRelayNode(t.id, node, self))) {
        this.log?.info({ takeover: t.id, from: node }, 'take-over relay taken over from an unreachable node');
        return this.attachHeld(t, role, ws, release, held);
      }
    }
    release();
    ws.close(TRY_AGAIN, 'the relay is moving: connect again');
  }

  private attachHeld(t: TakeoverRecord, role: RelayRole, ws: WebSocket, release: () => void, held: [RawData, boolean][]): void {
    release();
    // The end may have left while its session was routed: nothing to pair then.
    if (ws.readyState !== 1) return;
    this.attach(t, role, ws);
    for (const [data, isBinary] of held) ws.emit('message', data, isBinary);
  }

  attach(t: TakeoverRecord, role: RelayRole, ws: WebSocket): void {
    let pair = this.pairs.get(t.id);
    if (!pair) {
      pair = { t };
      this.pairs.set(t.id, pair);
      // Until the session's end by the service clock; expiry is also checked on every message.
      pair.timer = setTimeout(() => void this.expireIfDue(t.id, true), this.takeovers.remainingMs(t) + 50);
      pair.timer.unref();
    }
    const previous = pair[role];
    pair[role] = ws;
    if (previous) previous.close(REPLACED, 'replaced by a newer connection');
    ws.on('error', () => {});
    // One listener per socket, synchronous: a frame costs no promise and no closure (bench/takeover-relay.ts).
    ws.on('message', (data, isBinary) => this.onMessage(t.id, role, ws, data, isBinary));
    ws.on('close', () => void this.onClose(t.id, role, ws).catch(() => {}));
    // The agent learns the owner is watching whichever end came first (it streams frames from then on).
    if (pair.agent && pair.owner) this.send(pair.agent, '{"t":"live"}');
  }

  private onMessage(id: string, role: RelayRole, ws: WebSocket, data: RawData, isBinary: boolean): void {
    try {
      const pair = this.pairs.get(id);
      if (!pair || pair[role] !== ws) return;
      if (!this.takeovers.isOpen(pair.t)) return this.settle(this.expireIfDue(id, false), id, role, ws);
      if (isBinary) return refuse(ws, 'text JSON messages only');
      const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      // Most of what an agent sends is frames as its SDK spells them: checked on the bytes and
      // relayed as received (a text message), never turned into a 50 kB string.
      if (role === 'agent' && isCanonicalFrame(bytes)) {
        const owner = pair.owner;
        if (owner && owner.readyState === 1 && owner.bufferedAmount <= MAX_UNSENT_TO_OWNER) owner.send(bytes, AS_TEXT);
        return;
      }
      // The sockets skip ws's own UTF-8 check (app.ts): a canonical frame is ASCII, everything else is checked here.
      if (!isUtf8(bytes)) return ws.close(INVALID_DATA, 'text messages must be valid UTF-8');
      const text = bytes.toString('utf8');
      if (role === 'agent') {
        const c = checkAgentMessage(text);
        if (!c.ok) return refuse(ws, c.reason);
        if (c.message.t === 'done') return this.settle(this.takeovers.end(pair.t, 'done'), id, role, ws);
        const owner = pair.owner;
        if (c.message.t === 'frame' && owner && owner.bufferedAmount > MAX_UNSENT_TO_OWNER) return;
        this.forward(owner, bytes);
      } else {
        const c = checkOwnerMessage(text);
        if (!c.ok) return refuse(ws, c.reason);
        this.forward(pair.agent, bytes);
      }
    } catch (e) {
      this.failed(id, role, ws, e);
    }
  }

  /** Waits for a message's work in the store (done, expiry); its failure closes the end that sent it. */
  private settle(work: Promise<unknown>, id: string, role: RelayRole, ws: WebSocket): void {
    work.catch((e: unknown) => this.failed(id, role, ws, e));
  }

  private failed(id: string, role: RelayRole, ws: WebSocket, e: unknown): void {
    this.log?.info({ takeover: id, role, err: e instanceof Error ? e.message : String(e) }, 'take-over message failed');
    ws.close(1011, 'relay error');
  }

  private async onClose(id: string, role: RelayRole, ws: WebSocket): Promise<void> {
    const pair = this.pairs.get(id);
    if (!pair || pair[role] !== ws) return;
    pair[role] = undefined;
    // The agent leaving ends the session; the owner may come back (a reload, a flaky network).
    if (role === 'agent') {
      if (!(await this.takeovers.end(pair.t, 'agent_left'))) this.closeBoth(id, 'agent_left');
    } else if (!pair.agent) {
      this.drop(id);
    }
  }

  /** Ends the session as expired when its time is up (by the service clock, or by the timer). */
  private async expireIfDue(id: string, byTimer: boolean): Promise<boolean> {
    const pair = this.pairs.get(id);
    if (!pair) return true;
    if (!byTimer && this.takeovers.isOpen(pair.t)) return false;
    if (!(await this.takeovers.end(pair.t, 'expired'))) this.closeBoth(id, 'expired');
    return true;
  }

  /** Sends the closing message to both ends and closes them. */
  closeBoth(id: string, reason: ClosingReason): void {
    const pair = this.pairs.get(id);
    if (!pair) return;
    this.drop(id);
    for (const ws of [pair.agent, pair.owner]) {
      if (!ws) continue;
      this.send(ws, JSON.stringify({ t: reason }));
      ws.close(1000, reason);
    }
  }

  /** Closes every socket (the server is stopping). */
  closeAll(): void {
    clearInterval(this.checkTimer);
    for (const [id, pair] of [...this.pairs]) {
      this.drop(id);
      for (const ws of [pair.agent, pair.owner]) ws?.close(1001, 'server stopping');
    }
    for (const link of this.links) link.close(1001, 'server stopping');
  }

  /**
   * A session ended on this node: its ends here are closed; when another node relays it, that node
   * is told to look (it reads the state itself, so the message needs no authority).
   */
  private ended(id: string, state: Exclude<TakeoverState, 'open'>): void {
    if (this.pairs.has(id)) return this.closeBoth(id, state);
    const self = this.options.nodeUrl;
    if (self === null) return;
    void this.takeovers.relayNodeOf(id).then(async (node) => {
      if (!node || node === self) return;
      const res = await fetch(`${node.replace(/\/+$/, '')}/api/takeover/${id}/relay-check`, { method: 'POST', signal: AbortSignal.timeout(3000) });
      if (res.status !== 204) throw new Error(`answered ${res.status}`);
    }).catch((e: unknown) => this.log?.info({ takeover: id, err: e instanceof Error ? e.message : String(e) }, 'could not tell the relaying node a take-over ended; its periodic check will'));
  }

  /**
   * Looks up session `id` in the store when this node relays it, and closes its ends if it ended
   * (or is gone). Concurrent calls for one session share one lookup. Answers whether it is held here.
   */
  recheck(id: string): boolean {
    if (!this.pairs.has(id)) return false;
    if (!this.rechecks.has(id)) {
      const p = this.closeEnded([id]).finally(() => this.rechecks.delete(id));
      this.rechecks.set(id, p);
    }
    return true;
  }

  /** Checks every session relayed here against the store (the periodic safety net). */
  async checkHeld(): Promise<void> {
    if (this.pairs.size > 0) await this.closeEnded([...this.pairs.keys()]);
  }

  private async closeEnded(ids: string[]): Promise<void> {
    const states = await this.takeovers.statesOf(ids);
    for (const id of ids) {
      const state = states.get(id);
      // A session that is gone was erased with its account: its ends are told it was cancelled.
      if (state !== 'open') this.closeBoth(id, state ?? 'cancelled');
    }
  }

  private drop(id: string): void {
    const pair = this.pairs.get(id);
    if (pair?.timer) clearTimeout(pair.timer);
    this.pairs.delete(id);
  }

  private send(ws: WebSocket | undefined, text: string): void {
    if (ws && ws.readyState === 1) ws.send(text);
  }

  /** Relays a checked message as the bytes it arrived in (a text message: it is valid UTF-8). */
  private forward(ws: WebSocket | undefined, bytes: Buffer): void {
    if (ws && ws.readyState === 1) ws.send(bytes, AS_TEXT);
  }
}
