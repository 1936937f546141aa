import type { Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import { MAX_MESSAGE_BYTES } from '../domain/takeovers/relay-messages.ts';
import { RelayCore } from './relay-core.ts';
import type { FromRelayProcess, ToRelayProcess } from './relay-protocol.ts';

/*
 * The relay process (TAKEOVER_RELAY=process, the default; started by relay/child-ends.ts): it gets
 * each authorized take-over end as a socket handle with its upgrade request, answers the WebSocket
 * handshake and relays between the ends with the same RelayCore the service would run inline. It
 * loads only ws (with bufferutil), the message checks and this file, so the full garbage collections
 * that the frames' Buffers cause (every ~64 MB of them) mark a heap of a few MB, not the service's
 * ~45 MB (bench/README.md, "Take-over relay", part 3). Everything that needs the store stays in the
 * service's process; this one tells it the events the domain acts on.
 */

const tell = (m: FromRelayProcess): void => {
  if (process.connected) process.send?.(m);
};

// The same options as the service's own WebSocket server (app.ts): 4 MB messages (1009 beyond), UTF-8
// checked by the relay itself, no compression.
const wss = new WebSocketServer({ noServer: true, clientTracking: false, maxPayload: MAX_MESSAGE_BYTES, skipUTF8Validation: true, perMessageDeflate: false });
const core = new RelayCore({
  left: (id, role, end) => tell({ ev: 'left', id, role, end }),
  message: (id, role, end, type) => tell({ ev: 'message', id, role, end, type }),
  due: (id, role) => tell({ ev: 'due', id, role }),
  failed: (id, role, error) => tell({ ev: 'failed', id, role, error }),
}, () => performance.now());

/** Every socket handed here, until it closes (the stop waits for them). */
const sockets = new Set<Socket>();
let stopping = false;

function attach(m: Extract<ToRelayProcess, { op: 'attach' }>, socket: Socket): void {
  sockets.add(socket);
  let attached = false;
  socket.once('close', () => {
    sockets.delete(socket);
    tell({ ev: 'released', end: m.end });
    // A handshake that did not complete (the client went away meanwhile): that end left.
    if (!attached) tell({ ev: 'left', id: m.id, role: m.role, end: m.end });
    if (stopping && sockets.size === 0) process.exit(0);
  });
  if (stopping) return void socket.destroy();
  const expiresAt = performance.now() + m.remainingMs;
  // ws reads only the method and these headers of the request (no verifyClient, no path option).
  const request = { method: m.request.method, url: m.request.url, headers: m.request.headers } as unknown as Parameters<WebSocketServer['handleUpgrade']>[0];
  wss.handleUpgrade(request, socket, Buffer.from(m.head, 'base64'), (ws) => {
    attached = true;
    core.attach(m.id, m.role, ws, m.end, expiresAt);
  });
}

function stop(): void {
  stopping = true;
  core.closeAll();
  if (sockets.size === 0) process.exit(0);
  // Ends that do not answer the close within 2 s are cut off.
  setTimeout(() => {
    for (const s of sockets) s.destroy();
    process.exit(0);
  }, 2000).unref();
}

process.on('message', (m: ToRelayProcess, handle: unknown) => {
  switch (m.op) {
    case 'attach':
      if (handle && typeof (handle as Socket).write === 'function') attach(m, handle as Socket);
      return;
    case 'closeBoth':
      return core.closeBoth(m.id, m.reason);
    case 'fail':
      return core.fail(m.id, m.role);
    case 'drop':
      return core.drop(m.id);
    case 'stop':
      return stop();
    case 'memory':
      return tell({ ev: 'memory', ask: m.ask, usage: process.memoryUsage() });
  }
});

// The service's process is gone (a crash, kill -9): its sessions cannot go on, and the ends must
// see their sockets close rather than wait on a relay nobody controls.
process.on('disconnect', () => process.exit(0));
