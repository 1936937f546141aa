import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import type { TakeoverRecord } from '../../../store/ports/index.ts';
import { badRequest, unauthorized } from '../../../domain/errors.ts';
import { IdParam } from '../../schemas/common.ts';
import { MAX_MESSAGE_BYTES } from '../../../domain/takeovers/relay-messages.ts';

const SidParams = IdParam('sid', 'tk');
/** The session each upgrade was authorized for, from the preHandler to the socket handler. */
const authorized = new WeakMap<FastifyRequest, TakeoverRecord>();

const MESSAGES = `Agent → owner: \`{t:"frame", data: base64 JPEG, w, h}\`, \`{t:"url", url}\`, \`{t:"focus", field}\`, \`{t:"done"}\`. Owner → agent: \`{t:"live"}\`, \`{t:"click", x, y}\`, \`{t:"set", value ≤ 1000}\`, \`{t:"text", text ≤ 500}\`, \`{t:"key", key}\` (Enter, Backspace, Tab, Escape, ArrowUp, ArrowDown, ArrowLeft, ArrowRight), \`{t:"scroll", dy}\`. Closing messages \`{t:"done"|"cancelled"|"expired"|"agent_left"}\`, then the socket closes. Messages are JSON text of at most ${MAX_MESSAGE_BYTES} bytes, checked strictly: anything else closes the socket (1008, with the reason; 1009 when too big). Frames are relayed, never stored.`;

/**
 * The two ends of the take-over relay (decisions §21), as WebSocket upgrades: authorization runs in
 * the preHandler, after the path is validated, so a refused upgrade gets a plain 4xx answer.
 */
export async function takeoverSocketRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/v1/takeover/:sid/agent', {
    websocket: true,
    schema: {
      summary: 'The agent\'s end of the take-over relay (WebSocket)',
      description: `Upgrade to a WebSocket with \`Authorization: Bearer <agent_token>\` from \`POST /api/v1/takeover\`; a token (or anything) in the query string is refused (400), so it never lands in access logs. ${MESSAGES} The agent closing its socket ends the session (\`agent_left\`). 401 wrong token or ended session. A load balancer may route both ends by the session id in the path.`,
      tags: ['agent'],
      params: SidParams,
    },
    preHandler: async (request) => {
      if (request.url.includes('?')) throw badRequest('a token in the URL is refused: send Authorization: Bearer <agent_token>, and no query string');
      const header = request.headers.authorization;
      if (typeof header !== 'string' || !/^bearer \S+$/i.test(header)) throw unauthorized('send Authorization: Bearer <agent_token>');
      authorized.set(request, await s.takeovers.forAgent(request.params.sid, header.slice(7).trim()));
    },
  }, (socket, request) => {
    const t = authorized.get(request);
    if (!t) return socket.close(1008, 'not authorized');
    s.relay.attach(t, 'agent', socket);
  });

  app.get('/api/takeover/:sid/owner', {
    websocket: true,
    schema: {
      summary: 'The owner\'s end of the take-over relay (WebSocket)',
      description: `Upgrade to a WebSocket with the owner's session (cookie, or \`Authorization: Bearer <session_token>\`); with the cookie, an \`Origin\` of another site is refused (403), as for every state-changing request. ${MESSAGES} The owner may reconnect while the session is open. Another owner's, an ended or an unknown session: 404.`,
      tags: ['takeovers'],
      params: SidParams,
    },
    preHandler: async (request) => {
      const { user } = await s.auth.requiredForUpgrade(request);
      authorized.set(request, await s.takeovers.ownedOpen(user.id, request.params.sid));
    },
  }, (socket, request) => {
    const t = authorized.get(request);
    if (!t) return socket.close(1008, 'not authorized');
    s.relay.attach(t, 'owner', socket);
  });
}
