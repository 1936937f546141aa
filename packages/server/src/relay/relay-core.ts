import { isUtf8 } from 'node:buffer';
import type { WebSocket, RawData } from 'ws';
import { type ClosingReason, MAX_UNSENT_TO_OWNER, checkAgentMessage, checkOwnerMessage, isCanonicalFrame } from '../domain/takeovers/relay-messages.ts';

// Imports only ws's types and the message checks: the relay process (relay-child.ts) loads this file,
// and its heap must stay a few MB (bench/README.md, "Take-over relay", part 3).

export type RelayRole = 'agent' | 'owner';

/**
 * What the pairing core tells the side that holds the store (relay/takeover-relay.ts): the events
 * the domain acts on. `end` numbers an end's socket (the main side hands them out), so an event about
 * a socket the main side has since replaced is told apart from one about the current end.
 */
export interface RelayCoreEvents {
  /** The current end of `role` closed (a replaced end, or an end of a session closed here, is not reported). */
  left(id: string, role: RelayRole, end: number): void;
  /** A checked message other than a frame was relayed (`done` is not: it ends the session); its type. */
  message(id: string, role: RelayRole, end: number, type: string): void;
  /** A message arrived once the session's time was up: dropped, not relayed (told once per session). */
  due(id: string, role: RelayRole): void;
  /** Relaying a message threw: the end that sent it was closed (1011). */
  failed(id: string, role: RelayRole, error: string): void;
}

interface End {
  ws: WebSocket;
  end: number;
}

interface Pair {
  agent?: End;
  owner?: End;
  /** When the session's time is up, by the core's clock. */
  expiresAt: number;
  dueTold?: boolean;
}

/** 1008: policy violation (a message the relay refuses); 4000: replaced by a newer connection of the same end. */
const POLICY = 1008;
const REPLACED = 4000;
/** 1007: a text message that is not valid UTF-8 (RFC 6455 §7.4.1), as ws itself would close it. */
const INVALID_DATA = 1007;
/** The send options of every relayed message, made once. */
const AS_TEXT = { binary: false } as const;

/** Closes a socket that sent what the relay refuses; a close reason may hold at most 123 bytes. */
const refuse = (ws: WebSocket, reason: string): void => ws.close(POLICY, Buffer.from(reason).subarray(0, 120).toString());

/**
 * The take-over relay's socket pairing (decisions §21): pairs the agent's socket with the owner's,
 * checks every message (domain/takeovers/relay-messages.ts) and forwards the bytes it received to
 * the other end. Frames live only in memory for as long as the send takes. It knows nothing of the
 * store: what the domain must act on (an end left, `done`, a message past the session's time) goes
 * to `events`, and the main side tells it when a session ends (`closeBoth`).
 *
 * The same class runs in the service's process (TAKEOVER_RELAY=inline) and in the relay process
 * (relay-child.ts, the default), where each message costs the garbage collector only the small
 * heap of that process.
 */
export class RelayCore {
  private readonly pairs = new Map<string, Pair>();

  /** `now`: the clock the sessions' `expiresAt` are given in. */
  constructor(private readonly events: RelayCoreEvents, private readonly now: () => number) {}

  /** Sessions with at least one end here. */
  get size(): number {
    return this.pairs.size;
  }

  /** Pairs an upgraded end; a newer end of the same role replaces the older one (4000). */
  attach(id: string, role: RelayRole, ws: WebSocket, end: number, expiresAt: number): void {
    let pair = this.pairs.get(id);
    if (!pair) {
      pair = { expiresAt };
      this.pairs.set(id, pair);
    }
    const previous = pair[role];
    const current: End = { ws, end };
    pair[role] = current;
    if (previous) previous.ws.close(REPLACED, 'replaced by a newer connection');
    ws.on('error', () => {});
    // One listener per socket, synchronous: a frame costs no promise and no closure (bench/takeover-relay.ts).
    ws.on('message', (data, isBinary) => this.onMessage(id, role, current, data, isBinary));
    ws.on('close', () => this.onClose(id, role, current));
    // The agent learns the owner is watching whichever end came first (it streams frames from then on).
    if (pair.agent && pair.owner) send(pair.agent.ws, '{"t":"live"}');
  }

  private onMessage(id: string, role: RelayRole, from: End, data: RawData, isBinary: boolean): void {
    const ws = from.ws;
    try {
      const pair = this.pairs.get(id);
      if (!pair || pair[role] !== from) return;
      if (this.now() >= pair.expiresAt) {
        if (!pair.dueTold) (pair.dueTold = true), this.events.due(id, role);
        return;
      }
      if (isBinary) return refuse(ws, 'text JSON messages only');
      const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      // Most of what an agent sends is frames as its SDK spells them: checked on the bytes and
      // relayed as received (a text message), never turned into a 50 kB string.
      if (role === 'agent' && isCanonicalFrame(bytes)) {
        const owner = pair.owner?.ws;
        if (owner && owner.readyState === 1 && owner.bufferedAmount <= MAX_UNSENT_TO_OWNER) owner.send(bytes, AS_TEXT);
        return;
      }
      // The sockets skip ws's own UTF-8 check: a canonical frame is ASCII, everything else is checked here.
      if (!isUtf8(bytes)) return ws.close(INVALID_DATA, 'text messages must be valid UTF-8');
      const text = bytes.toString('utf8');
      if (role === 'agent') {
        const c = checkAgentMessage(text);
        if (!c.ok) return refuse(ws, c.reason);
        if (c.message.t === 'done') return this.events.message(id, role, from.end, 'done');
        const owner = pair.owner?.ws;
        if (c.message.t === 'frame') {
          if (!owner || owner.bufferedAmount <= MAX_UNSENT_TO_OWNER) forward(owner, bytes);
          return;
        }
        forward(owner, bytes);
        this.events.message(id, role, from.end, c.message.t);
      } else {
        const c = checkOwnerMessage(text);
        if (!c.ok) return refuse(ws, c.reason);
        forward(pair.agent?.ws, bytes);
        this.events.message(id, role, from.end, c.message.t);
      }
    } catch (e) {
      this.events.failed(id, role, e instanceof Error ? e.message : String(e));
      ws.close(1011, 'relay error');
    }
  }

  private onClose(id: string, role: RelayRole, end: End): void {
    const pair = this.pairs.get(id);
    if (!pair || pair[role] !== end) return;
    pair[role] = undefined;
    this.events.left(id, role, end.end);
  }

  /** Sends the closing message to both ends and closes them; the session is forgotten here. */
  closeBoth(id: string, reason: ClosingReason): void {
    const pair = this.pairs.get(id);
    if (!pair) return;
    this.pairs.delete(id);
    for (const end of [pair.agent, pair.owner]) {
      if (!end) continue;
      send(end.ws, JSON.stringify({ t: reason }));
      end.ws.close(1000, reason);
    }
  }

  /** Closes the current end of `role` after its message's work failed in the store (1011). */
  fail(id: string, role: RelayRole): void {
    this.pairs.get(id)?.[role]?.ws.close(1011, 'relay error');
  }

  /** Forgets a session none of whose ends is here any more (the owner left before the agent came). */
  drop(id: string): void {
    const pair = this.pairs.get(id);
    if (pair && !pair.agent && !pair.owner) this.pairs.delete(id);
  }

  /** Closes every socket (the server is stopping): `code` 1001. */
  closeAll(): void {
    for (const [id, pair] of [...this.pairs]) {
      this.pairs.delete(id);
      for (const end of [pair.agent, pair.owner]) end?.ws.close(1001, 'server stopping');
    }
  }
}

function send(ws: WebSocket, text: string): void {
  if (ws.readyState === 1) ws.send(text);
}

/** Relays a checked message as the bytes it arrived in (a text message: it is valid UTF-8). */
function forward(ws: WebSocket | undefined, bytes: Buffer): void {
  if (ws && ws.readyState === 1) ws.send(bytes, AS_TEXT);
}
