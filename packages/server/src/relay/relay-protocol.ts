import type { ClosingReason } from '../domain/takeovers/relay-messages.ts';
import type { RelayRole } from './relay-core.ts';

/**
 * The messages between the service's process and its relay process (relay/child-ends.ts and
 * relay-child.ts), over Node's IPC channel (JSON). Frames never cross it: only an end's socket
 * handle with its upgrade request, the session's end, and the events the domain acts on.
 */

/** An upgrade request as the relay process's WebSocket server reads it. */
export interface UpgradeRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

export type ToRelayProcess =
  /** Sent with the end's socket handle: the relay process answers the upgrade and pairs the end. */
  | { op: 'attach'; id: string; role: RelayRole; end: number; remainingMs: number; request: UpgradeRequest; head: string }
  | { op: 'closeBoth'; id: string; reason: ClosingReason }
  | { op: 'fail'; id: string; role: RelayRole }
  | { op: 'drop'; id: string }
  /** The service is stopping: close every end (1001), then exit once the sockets are closed. */
  | { op: 'stop' }
  | { op: 'memory'; ask: number };

export type FromRelayProcess =
  | { ev: 'left'; id: string; role: RelayRole; end: number }
  | { ev: 'message'; id: string; role: RelayRole; end: number; type: string }
  | { ev: 'due'; id: string; role: RelayRole }
  | { ev: 'failed'; id: string; role: RelayRole; error: string }
  /** End `end`'s socket closed in the relay process: the service closes its own copy of the handle. */
  | { ev: 'released'; end: number }
  | { ev: 'memory'; ask: number; usage: NodeJS.MemoryUsage };
