import { WebSocket, type RawData } from 'ws';
import { MAX_MESSAGE_BYTES, MAX_UNSENT_TO_OWNER } from '../domain/takeovers/relay-messages.ts';

/**
 * Node-to-node forwarding of one take-over end (decisions §21). When an end reaches a node that does
 * not relay its session, that node opens the same WebSocket on the relaying node (its
 * NODE_INTERNAL_URL, read from the session row) with the client's own credentials, and pipes
 * messages both ways. The relaying node authorizes the link exactly as a direct connection and
 * checks every message, so a forwarding node adds no trust of its own: no secret is shared between
 * nodes.
 *
 * The address is this deployment's own node (set by its operator, usually private), not one an
 * owner, agent or site chose, so this is not an outbound fetch for the guard of decisions §24 (which
 * would refuse private addresses by design).
 */

/** Sent on a forwarded upgrade: the relaying node attaches it, or answers 409 when it no longer relays the session. */
export const RELAY_HOP_HEADER = 'x-mandate-relay-hop';
/** The client headers a link carries: its credentials and the Origin the relaying node checks. */
const FORWARDED_HEADERS = ['authorization', 'cookie', 'origin', 'user-agent'] as const;
/** A relaying node that does not answer within this is treated as gone. */
const CONNECT_TIMEOUT_MS = 3000;

export type LinkOutcome =
  /** Linked: the link is open; `pipe` it to the end's socket once that is upgraded. */
  | { outcome: 'linked'; link: ForwardedLink }
  /** The relaying node refused the end (its status is passed on in the close reason). */
  | { outcome: 'refused'; status: number }
  /** The relaying node answered that it no longer relays this session: claim again. */
  | { outcome: 'moved' }
  /** Nothing answered: the caller may take the relay over. */
  | { outcome: 'unreachable' };

export interface LinkTarget {
  /** The relaying node's NODE_INTERNAL_URL. */
  node: string;
  /** The path of the end on every node, e.g. /api/v1/takeover/tk_.../agent. */
  path: string;
  /** The client's upgrade request headers. */
  headers: Record<string, string | string[] | undefined>;
}

/** Close codes a peer may send (RFC 6455 §7.4): the others (1005, 1006, 1015) only describe a close. */
const sendableCode = (code: number, fallback: number): number => (code === 1000 || (code >= 1001 && code <= 1014 && ![1004, 1005, 1006].includes(code)) || (code >= 3000 && code <= 4999) ? code : fallback);
const shortReason = (reason: string): string => Buffer.from(reason).subarray(0, 120).toString();
const isFrame = (text: string): boolean => {
  try {
    return (JSON.parse(text) as { t?: unknown }).t === 'frame';
  } catch {
    return false;
  }
};

/**
 * Opens the end's WebSocket on the relaying node, before the end's own upgrade here is answered (so
 * that, should the relaying node be gone, this node can take the relay over and pair the end itself,
 * in whichever process pairs ends). Resolves once the outcome is known.
 */
export function openLink(target: LinkTarget): Promise<LinkOutcome> {
  const headers: Record<string, string> = { [RELAY_HOP_HEADER]: '1' };
  for (const h of FORWARDED_HEADERS) {
    const v = target.headers[h];
    if (typeof v === 'string') headers[h] = v;
  }
  const url = new URL(target.node.replace(/\/+$/, '') + target.path);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return new Promise((resolve) => {
    let settled = false;
    const settle = (o: LinkOutcome): void => {
      if (!settled) (settled = true), resolve(o);
    };
    const link = new WebSocket(url, { headers, maxPayload: MAX_MESSAGE_BYTES, handshakeTimeout: CONNECT_TIMEOUT_MS, perMessageDeflate: false });
    link.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      link.terminate();
      if (status === 409) return settle({ outcome: 'moved' });
      if (status >= 500 || status === 0) return settle({ outcome: 'unreachable' });
      settle({ outcome: 'refused', status });
    });
    link.on('error', () => settle({ outcome: 'unreachable' }));
    link.on('open', () => settle({ outcome: 'linked', link: new ForwardedLink(link) }));
  });
}

/**
 * An open link to the relaying node, waiting for the end's own socket: what the relaying node sends
 * meanwhile (`live`, frames) is held and passed on first, in order.
 */
export class ForwardedLink {
  private held: [RawData, boolean][] | undefined = [];
  private readonly hold = (data: RawData, isBinary: boolean): void => void this.held?.push([data, isBinary]);

  /** How the relaying node closed the link while it waited, if it did. */
  private closedWith: { code: number; reason: string } | undefined;

  constructor(readonly socket: WebSocket) {
    socket.on('message', this.hold);
    socket.once('close', (code, reason) => void (this.closedWith = { code, reason: reason.toString() }));
  }

  /** Pipes messages both ways until either side closes, which closes the other with the same code and reason. */
  pipe(local: WebSocket): void {
    const link = this.socket;
    const held = this.held ?? [];
    this.held = undefined;
    link.off('message', this.hold);
    if (local.readyState !== WebSocket.OPEN) return link.close(1000, 'the end left');
    const toLocal = (data: RawData, isBinary: boolean): void => {
      if (local.readyState !== WebSocket.OPEN) return;
      // Parsed only when the receiver is behind, to tell a frame (dropped) from anything else (kept).
      if (local.bufferedAmount > MAX_UNSENT_TO_OWNER && !isBinary && isFrame(data.toString())) return;
      local.send(data as Buffer, { binary: isBinary });
    };
    for (const [data, isBinary] of held) toLocal(data, isBinary);
    if (link.readyState !== WebSocket.OPEN) {
      const closed = this.closedWith;
      return local.close(sendableCode(closed?.code ?? 1011, 1011), shortReason(closed?.reason || 'the relaying node went away'));
    }
    local.on('message', (data, isBinary) => {
      if (link.readyState === WebSocket.OPEN) link.send(data, { binary: isBinary });
    });
    link.on('message', toLocal);
    local.on('close', (code, reason) => link.close(sendableCode(code, 1000), shortReason(reason.toString())));
    link.on('close', (code, reason) => {
      if (local.readyState === WebSocket.OPEN) local.close(sendableCode(code, 1011), shortReason(reason.toString() || 'the relaying node went away'));
    });
  }

  /** The end never got upgraded here (it left during the handshake): the link is closed. */
  abandon(): void {
    if (this.held !== undefined) this.socket.close(1000, 'the end left');
  }
}
