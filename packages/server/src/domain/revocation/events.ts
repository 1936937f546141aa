import { REVOCATION_DELTA_TYP, type RevocationDeltaClaims } from '@mandate/protocol';
import type { RevocationSignal } from '../../store/ports/index.ts';
import { type Clock, iso, seconds } from '../../clock.ts';
import { entriesDiff } from './events-diff.ts';
import type { RevocationSequence } from './rev-seq.ts';
import type { RevocationSnapshots, Snapshot } from './snapshot.ts';
import type { ClientKeys } from '../client-address.ts';
import { StreamShares } from './stream-shares.ts';

/**
 * A place among the node's streams (at most `maxStreams`) and within its client's shares, taken before
 * the opening starts and given back once the connection ends; giving it back twice counts once.
 */
export interface StreamSlot {
  release(): void;
}

/**
 * Why a stream was refused: `node`, the node holds `maxStreams` (nothing the client did: it may get a
 * place here or on another node soon); `address` or `network`, the client's address or IPv6 /48 holds
 * its share of this node's streams (its own streams stand in its way).
 */
export type StreamRefusal = 'node' | 'address' | 'network';

export type StreamAdmission = { slot: StreamSlot; refused?: undefined } | { slot?: undefined; refused: StreamRefusal };

/** One open event stream as the hub sees it: the route writes to its connection and drops it when it cannot keep up. */
export interface RevocationStream {
  /** Buffers are shared by every stream (written, not copied, to each socket). */
  write(data: Buffer | string): void;
  end(): void;
}

export interface RevocationEventsOptions {
  /** Between two keep-alive comments (decisions §30: 15 s). */
  keepAliveMs: number;
  /** Deltas held for resuming (Last-Event-ID); an older id gets a snapshot. */
  heldDeltas: number;
  /** At most this many bytes of deltas held (a mass revocation makes a delta of MBs); the latest is always held. */
  heldBytes: number;
  /** The counter is read this often in case a signal was missed (PostgreSQL reconnects, a write from outside the service). */
  checkMs: number;
  /** Streams open or opening on this node at most (REVOCATION_MAX_STREAMS): each holds a socket, a file descriptor and some memory. */
  maxStreams: number;
  /** Of those, at most this many for one client address: an IPv4 address or an IPv6 /64 (REVOCATION_MAX_STREAMS_PER_ADDRESS). */
  maxStreamsPerAddress: number;
  /** And at most this many for one IPv6 /48, however many /64s it spreads them over (REVOCATION_MAX_STREAMS_PER_NETWORK). */
  maxStreamsPerNetwork: number;
}

export const DEFAULT_EVENTS_OPTIONS: RevocationEventsOptions = {
  keepAliveMs: 15_000, heldDeltas: 1000, heldBytes: 32 * 1024 * 1024, checkMs: 2000, maxStreams: 20_000, maxStreamsPerAddress: 1000, maxStreamsPerNetwork: 4000,
};

interface HeldDelta {
  prevSeq: number;
  revSeq: number;
  /** The whole event, as written to every stream. */
  text: Buffer;
}

/**
 * The revocation event stream of one node (decisions §30): the snapshot it holds, the deltas since,
 * and its open streams. A change committed on any node reaches it as a signal carrying the new
 * rev_seq only (store: RevocationSignal); the node then builds the new list ONCE (snapshot.ts), signs
 * one delta against the list it held, and writes the same text to every stream. A connection never
 * builds a list: it gets the snapshot held (signed again at most once a second, shared by a burst of
 * reconnects) or the deltas held since its Last-Event-ID.
 */
export class RevocationEvents {
  private head: Snapshot | undefined;
  private starting: Promise<Snapshot> | undefined;
  private readonly chain: HeldDelta[] = [];
  private readonly streams = new Set<RevocationStream>();
  /** Slots taken: the streams open plus those still opening (awaiting the list or its signature). */
  private slotsTaken = 0;
  /** The slots taken per client address and per IPv6 /48, within `slotsTaken`. */
  private readonly perAddress: StreamShares;
  private readonly perNetwork: StreamShares;
  private refreshing: Promise<void> | undefined;
  private again = false;
  private snapshotEvent: { jws: Buffer[]; text: Buffer } | undefined;
  private chainBytes = 0;
  private unsubscribe: (() => void) | undefined;
  private timers: NodeJS.Timeout[] = [];
  private closed = false;
  /** Deltas written to every stream within the last keep-alive period, oldest first (see recentBytes). */
  private readonly recent: { at: number; bytes: number }[] = [];
  private recentTotal = 0;

  constructor(
    private readonly snapshots: RevocationSnapshots,
    private readonly sequence: Pick<RevocationSequence, 'current'>,
    private readonly signal: RevocationSignal,
    private readonly sign: (claims: RevocationDeltaClaims, typ: string) => Promise<string>,
    private readonly clock: Clock,
    private readonly issuer: string,
    private readonly opts: RevocationEventsOptions = DEFAULT_EVENTS_OPTIONS,
    /** Told how many streams each delta was written to (the metrics). */
    private readonly onSent: (streams: number) => void = () => {},
  ) {
    this.perAddress = new StreamShares(opts.maxStreamsPerAddress);
    this.perNetwork = new StreamShares(opts.maxStreamsPerNetwork);
  }

  /** Streams open on this node. */
  get openStreams(): number {
    return this.streams.size;
  }

  /**
   * Bytes of the deltas written to every stream within the last keep-alive period. A stream may have
   * them unsent on top of its bound (the route): a client still reading a delta of MBs (a mass
   * revocation) is not dropped because a keep-alive or another delta came before it had read it all;
   * a client that has not read it a keep-alive period later is. Wall time (performance.now()), not the
   * service's clock: this is about how fast bytes move.
   */
  recentBytes(): number {
    const since = performance.now() - this.opts.keepAliveMs;
    for (let first = this.recent[0]; first !== undefined && first.at <= since; first = this.recent[0]) {
      this.recent.shift();
      this.recentTotal -= first.bytes;
    }
    return this.recentTotal;
  }

  /** Client keys (addresses and IPv6 /48s) holding a slot: none once every stream has ended. */
  get streamHolders(): number {
    return this.perAddress.holders + this.perNetwork.holders;
  }

  /**
   * A slot for a new stream from `client`, or why there is none: its address or network holds its
   * share already (checked first: a client past its share is told so, even when the node is full
   * too), or the node holds its maximum. The checks and the takes are one synchronous step, and a
   * stream counts from before its opening's first await: a burst of connections can never take more
   * than the node's cap or a client's share between them.
   */
  admit(client: ClientKeys): StreamAdmission {
    const { address, network } = client;
    if (this.perAddress.full(address)) return { refused: 'address' };
    if (this.perNetwork.full(network)) return { refused: 'network' };
    if (this.slotsTaken >= this.opts.maxStreams) return { refused: 'node' };
    this.slotsTaken++;
    this.perAddress.take(address);
    this.perNetwork.take(network);
    let held = true;
    return {
      slot: {
        release: () => {
          if (!held) return;
          held = false;
          this.slotsTaken--;
          this.perAddress.give(address);
          this.perNetwork.give(network);
        },
      },
    };
  }

  /** The list this node holds, built on first use; throws when the database cannot be reached. */
  async ready(): Promise<Snapshot> {
    if (this.head) return this.head;
    this.start();
    this.starting ??= this.snapshots.current().finally(() => { this.starting = undefined; });
    const first = await this.starting;
    this.head ??= first;
    return this.head;
  }

  /**
   * Writes the stream's opening (a snapshot, or the deltas since `lastEventId` when they are held
   * from exactly there) and adds it to the streams: in one synchronous step, so no delta is sent
   * between the two.
   */
  async open(stream: RevocationStream, lastEventId: number | undefined): Promise<void> {
    let head = await this.ready();
    // A client ahead of this node (it read another node's delta first): this node catches up first.
    if (lastEventId !== undefined && lastEventId > head.rev_seq) {
      await this.refresh();
      head = await this.ready();
    }
    let opening: Buffer | undefined;
    let from = lastEventId;
    if (from === undefined || this.deltasSince(from) === undefined) {
      opening = await this.snapshotText(head);
      from = head.rev_seq;
    }
    const deltas = this.deltasSince(from);
    if (this.closed) return stream.end();
    // The chain moved on past `from` while the snapshot was signed (a thousand deltas): start again.
    if (deltas === undefined) return this.open(stream, undefined);
    if (opening) stream.write(opening);
    for (const d of deltas) stream.write(d);
    this.streams.add(stream);
  }

  /** Forgets a stream whose connection ended. */
  remove(stream: RevocationStream): void {
    this.streams.delete(stream);
  }

  /** Ends every stream and stops listening (the app closes). */
  close(): void {
    this.closed = true;
    this.unsubscribe?.();
    for (const t of this.timers) clearInterval(t);
    for (const s of this.streams) s.end();
    this.streams.clear();
  }

  /** Builds the list again when the counter moved, and sends the delta; one build at a time, the signals meanwhile coalesced. */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    const run = async () => {
      do {
        this.again = false;
        await this.step();
      } while (this.again && !this.closed);
    };
    this.refreshing = run().finally(() => { this.refreshing = undefined; });
    return this.refreshing;
  }

  private start(): void {
    if (this.unsubscribe || this.closed) return;
    this.unsubscribe = this.signal.subscribe((revSeq) => {
      if (revSeq !== undefined && this.head && revSeq <= this.head.rev_seq) return;
      this.refresh().catch(() => { /* the next signal or check tries again */ });
    });
    const keepAlive = setInterval(() => {
      const text = `: keep-alive ${iso(this.clock.now())}\n\n`;
      for (const s of this.streams) s.write(text);
    }, this.opts.keepAliveMs);
    const check = setInterval(() => {
      if (!this.head) return;
      const held = this.head.rev_seq;
      this.sequence.current().then((c) => (c > held ? this.refresh() : undefined)).catch(() => {});
    }, this.opts.checkMs);
    keepAlive.unref();
    check.unref();
    this.timers = [keepAlive, check];
  }

  private async step(): Promise<void> {
    const prev = this.head;
    const next = await this.snapshots.current();
    if (prev === undefined) {
      this.head = next;
      return;
    }
    // Entries that only aged out (no new rev_seq) stay with the list held: they refuse no live
    // pass, and the next delta removes them.
    if (next.rev_seq <= prev.rev_seq) return;
    const { added, removed } = entriesDiff(prev, next);
    const claims: RevocationDeltaClaims = { type: 'revocation-delta', iss: this.issuer, iat: seconds(this.clock.now()), rev_seq: next.rev_seq, prev_seq: prev.rev_seq, added, removed };
    const jwt = await this.sign(claims, REVOCATION_DELTA_TYP);
    if (this.head !== prev) return;
    const delta: HeldDelta = { prevSeq: prev.rev_seq, revSeq: next.rev_seq, text: Buffer.from(`event: delta\nid: ${next.rev_seq}\ndata: ${jwt}\n\n`) };
    this.chain.push(delta);
    this.chainBytes += delta.text.length;
    while (this.chain.length > 1 && (this.chain.length > this.opts.heldDeltas || this.chainBytes > this.opts.heldBytes)) {
      this.chainBytes -= this.chain.shift()?.text.length ?? 0;
    }
    this.head = next;
    this.recent.push({ at: performance.now(), bytes: delta.text.length });
    this.recentTotal += delta.text.length;
    this.recentBytes(); // forgets the old ones even when no stream writes
    for (const s of this.streams) s.write(delta.text);
    if (this.streams.size > 0) this.onSent(this.streams.size);
  }

  /** The held deltas from `revSeq` to the head (none when at the head); undefined when not held from exactly there. */
  private deltasSince(revSeq: number): Buffer[] | undefined {
    if (this.head && revSeq === this.head.rev_seq) return [];
    const i = this.chain.findIndex((d) => d.prevSeq === revSeq);
    if (i < 0) return undefined;
    return this.chain.slice(i).map((d) => d.text);
  }

  /** `event: snapshot`: the body of GET /api/v1/revocation on one line, written once per signature. */
  private async snapshotText(head: Snapshot): Promise<Buffer> {
    const jws = await this.snapshots.sign(head);
    const e = this.snapshotEvent;
    if (e && e.jws === jws) return e.text;
    const text = Buffer.concat([Buffer.from(`event: snapshot\nid: ${head.rev_seq}\ndata: `), ...this.snapshots.body(head, jws), Buffer.from('\n\n')]);
    this.snapshotEvent = { jws, text };
    return text;
  }
}
