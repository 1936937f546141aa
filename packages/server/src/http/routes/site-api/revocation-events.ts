import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../services.ts';
import type { RevocationStream, StreamRefusal } from '../../../domain/revocation/events.ts';
import { clientKeys } from '../../../domain/client-address.ts';

/** rev_seq as an event id: digits only, within Number's exact range. */
const EVENT_ID = /^\d{1,15}$/;

/**
 * The resume point: `Last-Event-ID` (as EventSource sends it) or `last_event_id` (clients that cannot
 * set headers); a string when it is not one (the 400's detail).
 */
function lastEventId(header: string | string[] | undefined, query: string | undefined): number | undefined | string {
  if (Array.isArray(header)) return 'Last-Event-ID must be given once';
  const v = header ?? query;
  if (v === undefined || v === '') return undefined;
  if (!EVENT_ID.test(v)) return 'Last-Event-ID must be a rev_seq: the id of an event of this stream (digits)';
  return Number(v);
}

/**
 * Retry-After of a stream refused at the cap or past a share, in seconds: a few, spread so that the
 * sites refused together do not all come back in the same second.
 */
const retryAfterSec = (): number => 3 + Math.floor(Math.random() * 5);

export const STREAMS_FULL_DETAIL = 'this node holds its maximum of revocation event streams: poll GET /api/v1/revocation meanwhile and open the stream again after Retry-After seconds';

/** The 429's detail: whose share is used up, how large it is, and what to do (decisions §10: "rate limit exceeded" first). */
export function shareDetail(share: Exclude<StreamRefusal, 'node'>, size: number): string {
  const who = share === 'address' ? 'this client address (an IPv6 client: its /64)' : "this client's IPv6 /48";
  return `rate limit exceeded: ${who} holds its share of this node's revocation event streams: ${size}. Close the streams it does not use; poll GET /api/v1/revocation meanwhile and open the stream again after Retry-After seconds`;
}

export async function revocationEventRoutes(app: FastifyInstance, s: Services): Promise<void> {
  const { maxBufferBytes, maxStreams, maxStreamsPerAddress, maxStreamsPerNetwork } = s.config.revocationEvents;
  app.get('/api/v1/revocation/events', {
    schema: {
      summary: 'The revocation list as a stream of Server-Sent Events',
      description: [
        '`text/event-stream`, public. The first event is `event: snapshot` with `id:` its `rev_seq` and `data:` the JSON of `GET /api/v1/revocation` on one line (verify its `signature` as there).',
        'Then, for every change to the list, `event: delta` with `id:` the new `rev_seq` and `data:` a JWT (header typ `revocation-delta+jwt`, ES256, kid from `GET /api/v1/jwks`) with claims `type` `revocation-delta`, `iss`, `iat`, `rev_seq`, `prev_seq` (the `rev_seq` of the list it applies to), `added` and `removed` (each `{revoked_agents, revoked_grants}`, the entry shapes of the snapshot): remove `removed`, then put in `added` (replacing the entry of the same agent id, or agent and site). Changes may be coalesced: a delta\'s `prev_seq` is always the `rev_seq` of the event before it.',
        'A change committed on any node is sent within about 200 ms. `Last-Event-ID` (header) or `last_event_id` (query) resumes: the deltas since that `rev_seq` when this node still holds them from exactly there, else a fresh snapshot first.',
        'A comment line `: keep-alive <ISO time>` every 15 s. A client that does not read is dropped once 1 MiB waits unsent beyond its opening and the deltas sent within the last keep-alive period; it reconnects with `Last-Event-ID`.',
        `A node holds at most ${maxStreams} streams (REVOCATION_MAX_STREAMS, 20,000 by default): past it a new stream is answered \`503\` with \`Retry-After\` (3 to 7 s) and a \`detail\`; the client polls \`GET /api/v1/revocation\` meanwhile and opens the stream again after Retry-After.`,
        `Of those, one client address (an IPv4 address, or an IPv6 /64; the address \`TRUST_PROXY\` says to believe) holds at most ${maxStreamsPerAddress} (REVOCATION_MAX_STREAMS_PER_ADDRESS, 1,000 by default) and one IPv6 /48 at most ${maxStreamsPerNetwork} (REVOCATION_MAX_STREAMS_PER_NETWORK, 4,000 by default), so one party cannot take every stream of a node: past its share a new stream is answered \`429\` with \`Retry-After\` (3 to 7 s), \`retry_after\` and a \`detail\`; the client closes the streams it does not use and polls meanwhile. The shares are counted per node, as the cap is.`,
      ].join(' '),
      tags: ['site'],
      querystring: Type.Object({ last_event_id: Type.Optional(Type.String({ description: 'the `rev_seq` of the last event received, for clients that cannot send `Last-Event-ID`', maxLength: 15 })) }),
      response: {
        400: Type.Object({ detail: Type.String() }),
        429: Type.Object({ detail: Type.String(), retry_after: Type.Integer({ minimum: 1, description: 'seconds, as Retry-After' }) }),
        503: Type.Object({ detail: Type.String() }),
        200: Type.String({ description: 'text/event-stream: `snapshot`, then `delta` events and keep-alive comments; never ends by itself' }),
      },
    },
  }, async (request, reply) => {
    const from = lastEventId(request.headers['last-event-id'], (request.query as { last_event_id?: string }).last_event_id);
    if (typeof from === 'string') return reply.code(400).send({ detail: from });
    // Taken before the first await, so a burst cannot pass the cap or a share; given back when the stream ends.
    const { slot, refused } = s.revocationEvents.admit(clientKeys(request.ip));
    if (!slot) {
      s.metrics.revocationStreamRefused(refused);
      const wait = retryAfterSec();
      reply.header('retry-after', String(wait));
      if (refused === 'node') return reply.code(503).send({ detail: STREAMS_FULL_DETAIL });
      const size = refused === 'address' ? maxStreamsPerAddress : maxStreamsPerNetwork;
      return reply.code(429).send({ detail: shareDetail(refused, size), retry_after: wait });
    }
    try {
      // The list is held before the answer starts, so an unreachable database is a plain 503.
      await s.revocationEvents.ready();
    } catch (e) {
      slot.release();
      throw e;
    }
    const raw = reply.raw;
    reply.hijack();
    raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // Proxies (nginx) would otherwise hold the events back.
      'x-accel-buffering': 'no',
      // A stream's connection is not reused: once the stream ends (the node shutting down, a client
      // dropped) the socket closes with it, rather than idling until the keep-alive timeout (72 s) and
      // holding the node's shutdown that long.
      connection: 'close',
    });
    raw.flushHeaders();
    // An injected request (app.inject: no connection) is only answered when its response ends: it gets the opening and the end.
    const injected = '_lightMyRequest' in request.raw;
    let ended = false;
    // Bounded: a client that does not read is dropped rather than buffered for without end. The
    // opening (a snapshot of up to MBs, or the deltas held since Last-Event-ID; shared by every stream,
    // not copied) does not count, nor do the deltas written within the last keep-alive period
    // (recentBytes): a client still reading them is not dropped for it.
    let allowed = maxBufferBytes;
    let opening = true;
    const stream: RevocationStream = {
      write(data) {
        if (ended) return;
        if (opening) {
          allowed += data.length;
        } else if (raw.writableLength > allowed + s.revocationEvents.recentBytes()) {
          stream.end();
          raw.destroy();
          return;
        }
        raw.write(data);
      },
      end() {
        if (ended) return;
        ended = true;
        s.revocationEvents.remove(stream);
        slot.release();
        raw.end();
      },
    };
    raw.on('close', () => stream.end());
    // A client gone while the list was read: 'close' has already been emitted and will not be again.
    if (raw.destroyed) stream.end();
    try {
      if (!ended) await s.revocationEvents.open(stream, from);
      opening = false;
    } catch (e) {
      request.log.warn({ err: e }, 'revocation stream: the opening failed');
      stream.end();
    }
    // The client left while the opening was signed: end() ran before open() added the stream.
    if (ended) s.revocationEvents.remove(stream);
    if (injected) stream.end();
  });
}
