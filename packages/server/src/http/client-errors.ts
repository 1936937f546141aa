import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError } from 'fastify';

/**
 * Answers requests Node's HTTP parser rejects before any route runs (headers too large, a
 * malformed request line, a client too slow to send its request) with the same `{detail}` body as
 * every other 4xx (Fastify's default writes `{error, message, statusCode}`), then closes the
 * connection, as Node does: the parser cannot continue after such a request.
 */
export function clientErrorHandler(err: ConnectionError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, detail] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'request timeout: the request was not received in time']
    : err.code === 'HPE_HEADER_OVERFLOW' ? [431, 'request headers too large']
    : [400, 'malformed HTTP request'];
  // A HEAD request's answer has no body (its client would read one as garbage). The request line
  // is at the start of the raw packet Node hands over, when the request came in one piece.
  // (Fastify types rawPacket as the JSON form of a Buffer; Node hands over the Buffer itself.)
  const raw: unknown = err.rawPacket;
  const head = Buffer.isBuffer(raw) && raw.subarray(0, 5).toString('latin1') === 'HEAD ';
  const body = head ? '' : JSON.stringify({ detail });
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${head ? 0 : Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(err);
}
