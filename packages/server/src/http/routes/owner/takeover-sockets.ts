import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import type { TakeoverRecord } from '../../../store/ports/index.ts';
import { badRequest, conflict, unauthorized } from '../../../domain/errors.ts';
import { IdParam } from '../../schemas/common.ts';
import { MAX_MESSAGE_BYTES } from '../../../domain/takeovers/relay-messages.ts';
import { RELAY_HOP_HEADER } from '../../../relay/node-link.ts';
import type { RelayRole } from '../../../relay/takeover-relay.ts';

const SidParams = IdParam('sid', 'tk');
/** The session each upgrade was authorized for, from the preHandler to the socket handler. */
const authorized = new WeakMap<FastifyRequest, TakeoverRecord>();

const MESSAGES = `Agent → owner: \`{t:"frame", data: base64 JPEG, w, h}\`, \`{t:"url", url}\`, \`{t:"focus", field}\`, \`{t:"done"}\`. Owner → agent: \`{t:"live"}\`, \`{t:"click", x, y}\`, \`{t:"set", value ≤ 1000}\`, \`{t:"text", text ≤ 500}\`, \`{t:"key", key}\` (Enter, Backspace, Tab, Escape, ArrowUp, ArrowDown, ArrowLeft, ArrowRight), \`{t:"scroll", dy}\`. Closing messages \`{t:"done"|"cancelled"|"expired"|"agent_left"}\`, then the socket closes. Messages are JSON text of at most ${MAX_MESSAGE_BYTES} bytes, checked strictly: anything else closes the socket (1008, with the reason; 1007 when not valid UTF-8; 1009 when too big). Frames are relayed, never stored.`;

const NODES = `With several nodes, each end may reach any node: one that does not relay the session forwards the end to the one that does (\`NODE_INTERNAL_URL\`, docs/operations/scaling.md), with the client's own credentials; a load balancer may also route both ends by the session id in the path.`;

/**
 * The two ends of the take-over relay (decisions §21), as WebSocket upgrades: authorization runs in
 * the preHandler, after the path is validated, so a refused upgrade gets a plain 4xx answer. An
 * end forwarded by another node (RELAY_HOP_HEADER) is authorized the same way, and answered 409
 * when this node no longer relays its session (the forwarding node then looks again).
 */
export async function takeoverSocketRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const forwardedHere = async (request: FastifyRequest, t: TakeoverRecord): Promise<void> => {
    const self = s.config.nodeInternalUrl;
    if (request.headers[RELAY_HOP_HEADER] === undefined || self === null) return;
    if ((await s.takeovers.claimRelayNode(t.id, self)) !== self) throw conflict('this node does not relay this take-over');
  };
  const route = (t: TakeoverRecord | undefined, role: RelayRole, socket: WebSocket, request: FastifyRequest): void => {
    if (!t) return socket.close(1008, 'not authorized');
    // A forwarded end was routed by the node that forwarded it: it is paired here.
    if (request.headers[RELAY_HOP_HEADER] !== undefined) return s.relay.attach(t, role, socket);
    void s.relay.connect(t, role, socket, { path: request.url, headers: request.headers }).catch((e: unknown) => {
      request.log.warn({ takeover: t.id, err: e instanceof Error ? e.message : String(e) }, 'take-over routing failed');
      socket.close(1011, 'relay unavailable: connect again');
    });
  };
  app.get('/api/v1/takeover/:sid/agent', {
    websocket: true,
    schema: {
      summary: 'The agent\'s end of the take-over relay (WebSocket)',
      description: `Upgrade to a WebSocket with \`Authorization: Bearer <agent_token>\` from \`POST /api/v1/takeover\`; a token (or anything) in the query string is refused (400), so it never lands in access logs. ${MESSAGES} The agent closing its socket ends the session (\`agent_left\`). 401 wrong token or ended session. ${NODES}`,
      tags: ['agent'],
      params: SidParams,
    },
    preHandler: async (request) => {
      if (request.url.includes('?')) throw badRequest('a token in the URL is refused: send Authorization: Bearer <agent_token>, and no query string');
      const header = request.headers.authorization;
      if (typeof header !== 'string' || !/^bearer \S+$/i.test(header)) throw unauthorized('send Authorization: Bearer <agent_token>');
      const t = await s.takeovers.forAgent(request.params.sid, header.slice(7).trim());
      await forwardedHere(request, t);
      authorized.set(request, t);
    },
  }, (socket, request) => route(authorized.get(request), 'agent', socket, request));

  app.get('/api/takeover/:sid/owner', {
    websocket: true,
    schema: {
      summary: 'The owner\'s end of the take-over relay (WebSocket)',
      description: `Upgrade to a WebSocket with the owner's session (cookie, or \`Authorization: Bearer <session_token>\`); with the cookie, an \`Origin\` of another site is refused (403), as for every state-changing request. ${MESSAGES} The owner may reconnect while the session is open. Another owner's, an ended or an unknown session: 404. ${NODES}`,
      tags: ['takeovers'],
      params: SidParams,
    },
    preHandler: async (request) => {
      const { user } = await s.auth.requiredForUpgrade(request);
      const t = await s.takeovers.ownedOpen(user.id, request.params.sid);
      await forwardedHere(request, t);
      authorized.set(request, t);
    },
  }, (socket, request) => route(authorized.get(request), 'owner', socket, request));

  app.post('/api/takeover/:sid/relay-check', {
    schema: {
      summary: 'Node to node: look whether a take-over relayed here has ended',
      description: 'Sent by a node where a take-over ended (a cancel) to the node that relays it (decisions §21). It carries no authority: the relaying node reads the session from the store and closes both ends only if it has ended or is gone. 204 whether or not this node relays the session. Every node also checks the sessions it relays every 10 s.',
      tags: ['internal'],
      params: SidParams,
      response: { 204: { type: 'null', description: 'looked (or nothing relayed here)' } },
    },
  }, async (request, reply) => {
    s.relay.recheck(request.params.sid);
    return reply.code(204).send();
  });
}
