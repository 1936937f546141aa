import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import type { Clock } from '../clock.ts';
import type { ClosingReason } from '../domain/takeovers/relay-messages.ts';
import { RelayCore, type RelayCoreEvents, type RelayRole } from './relay-core.ts';
import type { UpgradeRequest } from './relay-protocol.ts';

export interface RelayLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** An authorized end, as the route hands it to the relay: upgraded here, or still an upgrade request. */
export type Handover =
  | { ws: WebSocket }
  /** The raw socket after the upgrade request, the bytes read past it, and the request: the relay process answers the handshake. */
  | { upgrade: { socket: Socket; head: Buffer; request: UpgradeRequest } };

/**
 * Where the take-over ends of the sessions this node relays are paired: in this process
 * (InlineEnds, TAKEOVER_RELAY=inline) or in the relay process (child-ends.ts, the default). Both run
 * one RelayCore; the main side (takeover-relay.ts) drives either through these calls and gets the
 * same events back.
 */
export interface RelayEnds {
  /** 'upgrade': ends are handed over before the WebSocket handshake; 'websocket': once upgraded here. */
  readonly takes: 'upgrade' | 'websocket';
  /** Pairs end number `end` of session `id`, whose time is up at `expiresAt` (service clock). */
  attach(id: string, role: RelayRole, end: number, expiresAt: number, handover: Handover): void;
  closeBoth(id: string, reason: ClosingReason): void;
  fail(id: string, role: RelayRole): void;
  drop(id: string): void;
  /** Gets ready before the first end (the server listens): starts the relay process. */
  start(): void;
  /** Closes every end (1001) and lets go of what holds them (the server is stopping). */
  stop(): Promise<void>;
  /** The memory of the process that relays the frames (tests, bench). */
  memory(): Promise<NodeJS.MemoryUsage>;
}

/** The ends paired in the service's own process, by the service clock (TAKEOVER_RELAY=inline). */
export class InlineEnds implements RelayEnds {
  readonly takes = 'websocket';
  private readonly core: RelayCore;

  constructor(events: RelayCoreEvents, clock: Clock) {
    this.core = new RelayCore(events, () => clock.now());
  }

  attach(id: string, role: RelayRole, end: number, expiresAt: number, handover: Handover): void {
    if (!('ws' in handover)) throw new Error('the inline relay takes upgraded sockets only');
    this.core.attach(id, role, handover.ws, end, expiresAt);
  }

  closeBoth(id: string, reason: ClosingReason): void {
    this.core.closeBoth(id, reason);
  }

  fail(id: string, role: RelayRole): void {
    this.core.fail(id, role);
  }

  drop(id: string): void {
    this.core.drop(id);
  }

  start(): void {}

  async stop(): Promise<void> {
    this.core.closeAll();
  }

  async memory(): Promise<NodeJS.MemoryUsage> {
    return process.memoryUsage();
  }
}
