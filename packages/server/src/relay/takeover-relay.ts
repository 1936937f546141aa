import type { WebSocket, RawData } from 'ws';
import type { TakeoverRecord } from '../store/ports/index.ts';
import type { Takeovers } from '../domain/takeovers/takeovers.ts';
import { type ClosingReason, checkAgentMessage, checkOwnerMessage } from '../domain/takeovers/relay-messages.ts';

export type RelayRole = 'agent' | 'owner';

export interface RelayLog {
  info(details: object, message: string): void;
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
/**
 * A frame is dropped, not queued, while this much is still unsent to the owner: a slow phone then
 * sees fewer frames, the newest, rather than a growing delay (and the node's memory stays bounded).
 */
const MAX_BUFFERED = 8 * 1024 * 1024;

/** Closes a socket that sent what the relay refuses; a close reason may hold at most 123 bytes. */
const refuse = (ws: WebSocket, reason: string): void => ws.close(POLICY, Buffer.from(reason).subarray(0, 120).toString());

/**
 * The take-over relay on one node (decisions §21): pairs the agent's socket with the owner's, checks
 * every message (domain/takeovers/relay-messages.ts) and forwards the text it received to the other
 * end. Frames live only in memory for as long as the send takes. When the session ends (done,
 * cancelled, expired, agent left) both ends get the closing message and are closed; the domain tells
 * the relay of ends decided elsewhere (a cancel over HTTP).
 */
export class TakeoverRelay {
  private readonly pairs = new Map<string, Pair>();

  constructor(private readonly takeovers: Takeovers, private readonly log?: RelayLog) {
    takeovers.onEnded((id, state) => this.closeBoth(id, state));
  }

  /** Sessions with at least one end on this node (metrics, tests). */
  get size(): number {
    return this.pairs.size;
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
    ws.on('message', (data, isBinary) => {
      void this.onMessage(t.id, role, ws, data, isBinary).catch((e: unknown) => {
        this.log?.info({ takeover: t.id, role, err: e instanceof Error ? e.message : String(e) }, 'take-over message failed');
        ws.close(1011, 'relay error');
      });
    });
    ws.on('close', () => void this.onClose(t.id, role, ws).catch(() => {}));
    // The agent streams once it hears the owner is there, whichever end connected first.
    if (role === 'owner') this.send(pair.agent, '{"t":"live"}');
    else if (pair.owner) this.send(ws, '{"t":"live"}');
  }

  private async onMessage(id: string, role: RelayRole, ws: WebSocket, data: RawData, isBinary: boolean): Promise<void> {
    const pair = this.pairs.get(id);
    if (!pair || pair[role] !== ws) return;
    if (await this.expireIfDue(id, false)) return;
    if (isBinary) return refuse(ws, 'text JSON messages only');
    const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
    if (role === 'agent') {
      const c = checkAgentMessage(text);
      if (!c.ok) return refuse(ws, c.reason);
      if (c.message.t === 'done') {
        await this.takeovers.end(pair.t, 'done');
        return;
      }
      const owner = pair.owner;
      if (c.message.t === 'frame' && owner && owner.bufferedAmount > MAX_BUFFERED) return;
      this.send(owner, text);
    } else {
      const c = checkOwnerMessage(text);
      if (!c.ok) return refuse(ws, c.reason);
      this.send(pair.agent, text);
    }
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
    for (const [id, pair] of [...this.pairs]) {
      this.drop(id);
      for (const ws of [pair.agent, pair.owner]) ws?.close(1001, 'server stopping');
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
}
