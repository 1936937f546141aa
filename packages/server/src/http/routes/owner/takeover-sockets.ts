import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import type { TakeoverRecord } from '../../../store/ports/index.ts';
import { badRequest, conflict, unauthorized } from '../../../domain/errors.ts';
import { IdParam } from '../../schemas/common.ts';
import { MAX_MESSAGE_BYTES } from '../../../domain/takeovers/relay-messages.ts';
import { RELAY_HOP_HEADER } from '../../../relay/node-link.ts';
import type { RelayRole, Route } from '../../../relay/takeover-relay.ts';

const SidParams = IdParam('sid', 'tk');
/** Where each authorized upgrade goes, from the preHandler to the socket handler. */
const routed = new WeakMap<FastifyRequest, { t: TakeoverRecord; way: Route }>();
/** What ws itself requires of an upgrade (its handleUpgrade): one the relay process could not answer is answered here (400). */
const WEBSOCKET_KEY = /^[+/0-9A-Za-z]{22}==$/;
const isValidUpgrade = (request: FastifyRequest): boolean => {
  const h = request.headers;
  return typeof h['sec-websocket-key'] === 'string' && WEBSOCKET_KEY.test(h['sec-websocket-key']) && ['8', '13'].includes(String(h['sec-websocket-version'])) && String(h.upgrade).toLowerCase() === 'websocket';
};

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
  /**
   * Decides where the authorized end goes before its upgrade is answered. Ends paired on this node
   * go to the relay process (TAKEOVER_RELAY=process) as the raw socket: the reply is hijacked, and
   * that process answers the handshake. Every other end is upgraded here.
   */
  const route = async (request: FastifyRequest, reply: FastifyReply, t: TakeoverRecord, role: RelayRole): Promise<void> => {
    // A plain GET (no upgrade) gets the 404 of a WebSocket route.
    if (!request.ws) return;
    const forwarded = request.headers[RELAY_HOP_HEADER] !== undefined;
    const way = await s.relay.route(t, { path: request.url, headers: request.headers, forwarded });
    if (way.to === 'here' && s.relay.takesUpgrades && isValidUpgrade(request)) {
      reply.hijack();
      const { method = 'GET', url = request.url, headers } = request.raw;
      return s.relay.attach(t, role, { upgrade: { socket: request.raw.socket, head: s.relay.headOf(request.raw), request: { method, url, headers } } });
    }
    // An end linked to another node whose upgrade here never completes: the link is closed.
    if (way.to === 'link') request.raw.socket.once('close', () => way.link.abandon());
    routed.set(request, { t, way });
  };
  const upgraded = (socket: WebSocket, request: FastifyRequest, role: RelayRole): void => {
    const r = routed.get(request);
    if (!r) return socket.close(1008, 'not authorized');
    if (r.way.to === 'link') return r.way.link.pipe(socket);
    if (r.way.to === 'closed') return socket.close(r.way.code, r.way.reason);
    // Ends for the relay process were handed over in the preHandler; one upgraded here (an upgrade
    // the relay process could not answer never gets this far) is paired in this process.
    if (s.relay.takesUpgrades) return socket.close(1011, 'relay unavailable: connect again');
    s.relay.attach(r.t, role, { ws: socket });
  };
  app.get('/api/v1/takeover/:sid/agent', {
    websocket: true,
    schema: {
      summary: 'The agent\'s end of the take-over relay (WebSocket)',
      description: `Upgrade to a WebSocket with \`Authorization: Bearer <agent_token>\` from \`POST /api/v1/takeover\`; a token (or anything) in the query string is refused (400), so it never lands in access logs. ${MESSAGES} The agent closing its socket ends the session (\`agent_left\`). 401 wrong token or ended session. ${NODES}`,
      tags: ['agent'],
      params: SidParams,
    },
    preHandler: async (request, reply) => {
      if (request.url.includes('?')) throw badRequest('a token in the URL is refused: send Authorization: Bearer <agent_token>, and no query string');
      const header = request.headers.authorization;
      if (typeof header !== 'string' || !/^bearer \S+$/i.test(header)) throw unauthorized('send Authorization: Bearer <agent_token>');
      const t = await s.takeovers.forAgent(request.params.sid, header.slice(7).trim());
      await forwardedHere(request, t);
      await route(request, reply, t, 'agent');
    },
  }, (socket, request) => upgraded(socket, request, 'agent'));

  app.get('/api/takeover/:sid/owner', {
    websocket: true,
    schema: {
      summary: 'The owner\'s end of the take-over relay (WebSocket)',
      description: `Upgrade to a WebSocket with the owner's session (cookie, or \`Authorization: Bearer <session_token>\`); with the cookie, an \`Origin\` of another site is refused (403), as for every state-changing request. ${MESSAGES} The owner may reconnect while the session is open. Another owner's, an ended or an unknown session: 404. ${NODES}`,
      tags: ['takeovers'],
      params: SidParams,
    },
    preHandler: async (request, reply) => {
      const { user } = await s.auth.requiredForUpgrade(request);
      const t = await s.takeovers.ownedOpen(user.id, request.params.sid);
      await forwardedHere(request, t);
      await route(request, reply, t, 'owner');
    },
  }, (socket, request) => upgraded(socket, request, 'owner'));

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
