import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * A connection a client opened but never sent a request on (a revocation stream's fetch aborted while
 * it connected, say) is not idle to Node: `close()` would wait for it until the headers timeout
 * (60 s and more) before the app could finish closing. From the moment the app starts closing, such
 * connections are destroyed every 100 ms. Connections that carried a request (Node closes them once
 * idle) and upgraded ones (the take-over relay ends those itself) are left alone.
 */
export function closeUnusedConnectionsOnClose(app: FastifyInstance): void {
  const unused = new Set<Socket>();
  const used = (socket: Socket) => unused.delete(socket);
  app.server.on('connection', (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  app.server.on('request', (req: { socket: Socket }) => used(req.socket));
  app.server.on('upgrade', (req: { socket: Socket }) => used(req.socket));
  let timer: NodeJS.Timeout | undefined;
  app.addHook('preClose', () => {
    timer = setInterval(() => {
      for (const socket of unused) socket.destroy();
    }, 100);
    timer.unref();
  });
  app.addHook('onClose', () => clearInterval(timer));
}
