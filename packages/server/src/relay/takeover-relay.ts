import type { IncomingMessage, Server } from 'node:http';
import type { WebSocket } from 'ws';
import type { TakeoverRecord, TakeoverState } from '../store/ports/index.ts';
import type { Takeovers } from '../domain/takeovers/takeovers.ts';
import type { Clock } from '../clock.ts';
import type { ClosingReason } from '../domain/takeovers/relay-messages.ts';
import type { RelayCoreEvents, RelayRole } from './relay-core.ts';
import { type Handover, InlineEnds, type RelayEnds, type RelayLog } from './relay-ends.ts';
import { ChildEnds } from './child-ends.ts';
import { type ForwardedLink, openLink } from './node-link.ts';

export type { RelayRole } from './relay-core.ts';

export interface RelayOptions {
  /** This node's NODE_INTERNAL_URL; null: one node, every end is paired here. */
  nodeUrl: string | null;
  /** TAKEOVER_RELAY: pair the ends in a relay process of their own (the default) or in this one. */
  mode: 'process' | 'inline';
  log?: RelayLog;
  /** How often the sessions held here are checked against the store (an end decided on a node that could not tell this one). */
  checkEveryMs?: number;
}

/** An end's upgrade, as the route saw it: the path and headers a forwarded link repeats. */
export interface RelayUpgrade {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Forwarded here by another node (RELAY_HOP_HEADER), which routed it already. */
  forwarded: boolean;
}

/** Where an authorized end goes, decided before its upgrade is answered. */
export type Route =
  /** Paired on this node. */
  | { to: 'here' }
  /** Piped to the node that relays the session. */
  | { to: 'link'; link: ForwardedLink }
  /** Upgraded, then closed with this code and reason. */
  | { to: 'closed'; code: number; reason: string };

interface Session {
  t: TakeoverRecord;
  /** The number of each role's current end (RelayCoreEvents). */
  ends: { agent?: number; owner?: number };
  timer: NodeJS.Timeout;
}

/** Attempts to find the relaying node when it moves meanwhile. */
const ROUTE_ATTEMPTS = 3;
/** 1013: try again later (the relay moved more often than the attempts allow). */
const TRY_AGAIN = 1013;
const HERE: Route = { to: 'here' };

/**
 * The take-over relay's main side (decisions §21): everything that needs the store. The ends
 * themselves are paired and their messages checked and forwarded by RelayCore, in the relay process
 * (child-ends.ts, TAKEOVER_RELAY=process, the default) or in this one (TAKEOVER_RELAY=inline); this
 * class hands it each authorized end, tells it when a session ends (done, cancelled, expired, agent
 * left, account deleted: the closing message both ends get) and acts on what it reports (an end
 * left, `done`, a message past the session's time).
 *
 * Across nodes, one node relays each session: the first node an end reaches records itself in the
 * session row (a compare-and-set, so racing nodes agree); an end that reaches another node is
 * forwarded there (relay/node-link.ts), from this process. An end decided on another node (a cancel
 * over HTTP) is told to the relaying node (`recheck`), and every node checks the sessions it relays
 * every few seconds, which also catches an account deleted elsewhere.
 */
export class TakeoverRelay {
  private readonly sessions = new Map<string, Session>();
  /** Forwarded ends on this node: their links to the relaying node (closed when this node stops). */
  private readonly links = new Set<WebSocket>();
  private readonly rechecks = new Map<string, Promise<void>>();
  /** The bytes read past each upgrade request (the relay process answers the handshake, so it needs them). */
  private readonly heads = new WeakMap<IncomingMessage, Buffer>();
  private readonly checkTimer: NodeJS.Timeout;
  private readonly ends: RelayEnds;
  private log: RelayLog | undefined;
  private nextEnd = 1;

  constructor(private readonly takeovers: Takeovers, private readonly clock: Clock, private readonly options: RelayOptions) {
    this.log = options.log;
    const events: RelayCoreEvents = {
      left: (id, role, end) => this.left(id, role, end),
      message: (id, role, end, type) => this.message(id, role, end, type),
      due: (id, role) => this.settle(this.expireIfDue(id, false), id, role),
      failed: (id, role, error) => this.log?.info({ takeover: id, role, err: error }, 'take-over message failed'),
    };
    this.ends = options.mode === 'process' ? new ChildEnds(events, clock, () => this.log) : new InlineEnds(events, clock);
    takeovers.onEnded((id, state) => this.ended(id, state));
    this.checkTimer = setInterval(() => void this.checkHeld().catch((e: unknown) => this.log?.info({ err: String(e) }, 'take-over check failed')), options.checkEveryMs ?? 10_000);
    this.checkTimer.unref();
  }

  /** The app's log, once it exists (the relay is built before it). */
  attachLog(log: RelayLog): void {
    this.log = log;
  }

  /** Keeps the bytes read past each upgrade request of `server`, which the relay process needs with the socket. */
  listen(server: Server): void {
    server.prependListener('upgrade', (request: IncomingMessage, _socket: unknown, head: Buffer) => void this.heads.set(request, head));
  }

  /** Starts the relay process, if ends are paired in one (the server listens: its memory is counted at rest, and the first end waits for no start). */
  start(): void {
    this.ends.start();
  }

  /** Sessions with at least one end on this node (metrics, tests). */
  get size(): number {
    return this.sessions.size;
  }

  /** Whether ends are handed over before their upgrade is answered (the relay process answers it). */
  get takesUpgrades(): boolean {
    return this.ends.takes === 'upgrade';
  }

  /** The relay process (tests, bench): its id, once started, and its memory. */
  get relayPid(): number | undefined {
    return this.ends instanceof ChildEnds ? this.ends.pid : undefined;
  }

  relayMemory(): Promise<NodeJS.MemoryUsage> {
    return this.ends.memory();
  }

  /**
   * Decides where an authorized end goes, before its upgrade is answered: paired here when this node
   * relays the session (or is the only one), else linked to the node that does. When that node is
   * unreachable this one takes the relay over.
   */
  async route(t: TakeoverRecord, upgrade: RelayUpgrade): Promise<Route> {
    const self = this.options.nodeUrl;
    if (self === null || upgrade.forwarded) return HERE;
    for (let attempt = 0; attempt < ROUTE_ATTEMPTS; attempt++) {
      const node = await this.takeovers.claimRelayNode(t.id, self);
      if (node === undefined) return { to: 'closed', code: 1000, reason: 'take-over ended' };
      if (node === self) return HERE;
      const linked = await openLink({ node, path: upgrade.path, headers: upgrade.headers });
      if (linked.outcome === 'linked') {
        const link = linked.link.socket;
        this.links.add(link);
        link.on('close', () => this.links.delete(link));
        return { to: 'link', link: linked.link };
      }
      if (linked.outcome === 'refused') return { to: 'closed', code: 1008, reason: `refused by the relaying node (${linked.status})` };
      if (linked.outcome === 'unreachable' && (await this.takeovers.moveRelayNode(t.id, node, self))) {
        this.log?.info({ takeover: t.id, from: node }, 'take-over relay taken over from an unreachable node');
        return HERE;
      }
    }
    return { to: 'closed', code: TRY_AGAIN, reason: 'the relay is moving: connect again' };
  }

  /** The bytes read past `request`'s upgrade request (empty when none were). */
  headOf(request: IncomingMessage): Buffer {
    return this.heads.get(request) ?? Buffer.alloc(0);
  }

  /** Pairs an end routed here: upgraded here (`ws`), or its upgrade for the relay process. */
  attach(t: TakeoverRecord, role: RelayRole, handover: Handover): void {
    let session = this.sessions.get(t.id);
    if (!session) {
      // Until the session's end by the service clock; expiry is also checked on every message.
      const timer = setTimeout(() => void this.expireIfDue(t.id, true), this.takeovers.remainingMs(t) + 50);
      timer.unref();
      session = { t, ends: {}, timer };
      this.sessions.set(t.id, session);
    }
    const end = this.nextEnd++;
    session.ends[role] = end;
    this.ends.attach(t.id, role, end, t.expiresAt, handover);
  }

  /** An end's current socket closed. */
  private left(id: string, role: RelayRole, end: number): void {
    const session = this.sessions.get(id);
    if (!session || session.ends[role] !== end) return;
    session.ends[role] = undefined;
    // The agent leaving ends the session; the owner may come back (a reload, a flaky network).
    if (role === 'agent') {
      void this.takeovers.end(session.t, 'agent_left').then((ended) => {
        if (!ended) this.closeBoth(id, 'agent_left');
      }).catch((e: unknown) => this.log?.info({ takeover: id, err: e instanceof Error ? e.message : String(e) }, 'take-over end failed'));
    } else if (!session.ends.agent) {
      this.forget(id);
      this.ends.drop(id);
    }
  }

  /** A message other than a frame: its session must still be open by the service clock; `done` ends it. */
  private message(id: string, role: RelayRole, end: number, type: string): void {
    const session = this.sessions.get(id);
    if (!session || session.ends[role] !== end) return;
    if (!this.takeovers.isOpen(session.t)) return this.settle(this.expireIfDue(id, false), id, role);
    if (type === 'done') this.settle(this.takeovers.end(session.t, 'done'), id, role);
  }

  /** Waits for a message's work in the store (done, expiry); its failure closes the end that sent it. */
  private settle(work: Promise<unknown>, id: string, role: RelayRole): void {
    work.catch((e: unknown) => {
      this.log?.info({ takeover: id, role, err: e instanceof Error ? e.message : String(e) }, 'take-over message failed');
      this.ends.fail(id, role);
    });
  }

  /** Ends the session as expired when its time is up (by the service clock, or by the timer). */
  private async expireIfDue(id: string, byTimer: boolean): Promise<boolean> {
    const session = this.sessions.get(id);
    if (!session) return true;
    if (!byTimer && this.takeovers.isOpen(session.t)) return false;
    if (!(await this.takeovers.end(session.t, 'expired'))) this.closeBoth(id, 'expired');
    return true;
  }

  /** Sends the closing message to both ends and closes them. */
  closeBoth(id: string, reason: ClosingReason): void {
    if (!this.sessions.has(id)) return;
    this.forget(id);
    this.ends.closeBoth(id, reason);
  }

  /** Closes every socket (the server is stopping) and stops the relay process. */
  async stop(): Promise<void> {
    clearInterval(this.checkTimer);
    for (const id of [...this.sessions.keys()]) this.forget(id);
    for (const link of this.links) link.close(1001, 'server stopping');
    await this.ends.stop();
  }

  /**
   * A session ended on this node: its ends here are closed; when another node relays it, that node
   * is told to look (it reads the state itself, so the message needs no authority).
   */
  private ended(id: string, state: Exclude<TakeoverState, 'open'>): void {
    if (this.sessions.has(id)) return this.closeBoth(id, state);
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
    if (!this.sessions.has(id)) return false;
    if (!this.rechecks.has(id)) {
      const p = this.closeEnded([id]).finally(() => this.rechecks.delete(id));
      this.rechecks.set(id, p);
    }
    return true;
  }

  /** Checks every session relayed here against the store (the periodic safety net). */
  async checkHeld(): Promise<void> {
    if (this.sessions.size > 0) await this.closeEnded([...this.sessions.keys()]);
  }

  private async closeEnded(ids: string[]): Promise<void> {
    const states = await this.takeovers.statesOf(ids);
    for (const id of ids) {
      const state = states.get(id);
      // A session that is gone was erased with its account: its ends are told it was cancelled.
      if (state !== 'open') this.closeBoth(id, state ?? 'cancelled');
    }
  }

  private forget(id: string): void {
    const session = this.sessions.get(id);
    if (session) clearTimeout(session.timer);
    this.sessions.delete(id);
  }
}
