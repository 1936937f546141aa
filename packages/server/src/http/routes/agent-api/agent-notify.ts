import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { agentBodyChecks } from '../../body-checks.ts';
import { NOTES_PER_MINUTE } from '../../../domain/notes.ts';
import { ReadableLine, ReadableText, withErrors } from '../../schemas/common.ts';

const AgentNoteIn = Type.Object({
  agent_id: Type.String({ minLength: 1, maxLength: 64 }),
  agent_jwt: Type.String({ minLength: 1, maxLength: 8192 }),
  text: ReadableText({ minLength: 1, maxLength: 2000 }),
  title: Type.Optional(ReadableLine({ maxLength: 200, default: '' })),
  kind: Type.Optional(Type.String({ minLength: 1, maxLength: 32, pattern: '^[a-z_]{1,32}$', default: 'agent', description: 'a short token, for example `done`, `stuck`, `summary` or `agent`' })),
});

export async function agentNotifyRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/api/v1/agent-notify', {
    config: { bodyChecks: agentBodyChecks('agent_id') },
    schema: {
      summary: "A one-way note to the owner's phone",
      description: `Nothing to approve. Answers where it went: \`inbox\` (kept in the owner's inbox) and \`devices\` (how many devices it is pushed to). The note is queued for the owner's devices (notification kind \`agent_note\` with \`agent_id\`, \`agent_name\`, \`title\`, \`text\`, \`kind\`) and recorded in Activity as \`agent.note\`. ${NOTES_PER_MINUTE} notes per agent per minute, then 429. 401 invalid agent JWT; 403 agent revoked.`,
      tags: ['agent'],
      body: AgentNoteIn,
      response: withErrors({ 200: Type.Object({
        ok: Type.Literal(true),
        inbox: Type.Boolean({ description: 'kept in the owner\'s inbox (GET /api/notifications) and Activity' }),
        devices: Type.Integer({ description: 'devices the note is pushed to: 0 when the owner has none, switched notes off, or is in quiet hours' }),
      }) }, 401, 403, 429),
    },
  }, async (request) => {
    const { agent_id, agent_jwt, text, title, kind } = request.body;
    const agent = await s.agents.verifyJwt(agent_jwt, agent_id);
    const went = await s.notes.send(agent, { title: title ?? '', text, kind: kind ?? 'agent' }, request.ip);
    return { ok: true as const, ...went };
  });
}
