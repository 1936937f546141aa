import type { FastifyInstance } from 'fastify';
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { EXPORT_LIMIT } from '../../../domain/privacy/export.ts';
import { withErrors } from '../../schemas/common.ts';

const ExportOut = Type.Object({
  format: Type.Literal('mandate-export'),
  version: Type.Integer(),
  service: Type.String(),
  exported_at: Type.String({ format: 'date-time' }),
  sections: Type.Array(Type.String(), { description: 'the names of the sections that follow, in order' }),
}, { additionalProperties: true, description: 'one key per section: profile, notification_settings, passkeys, devices, agents, grants, requests, notifications, activity, oidc_sign_ins, oidc_clients, plans, connections, operators (and any a newer service adds)' });

/** GET /api/export (decisions §16): the data export, streamed as a JSON download. */
export async function exportRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/api/export', {
    schema: {
      summary: 'Download everything held about the signed-in owner',
      description: `A JSON file (\`Content-Disposition: attachment; filename="mandate-export-<date>.json"\`), written as it is read (activity and other long lists page by page): the profile, notification settings, passkeys (names and dates), devices (push services, never their endpoints or keys), agents with their public keys, grants (never refresh-token hashes), requests, notifications, activity, live OIDC sign-ins and the OIDC clients the owner registered (never secrets), plans with their steps (never text digests), approval modes, take-over reports, the person's connections to operators (with the agents made through them; never consent codes) and the operators the person registered (never their secret or its hash). Never a hash, a secret or another person's data. Times are ISO 8601 (UTC). At most ${EXPORT_LIMIT.perAccount} export per account per ${EXPORT_LIMIT.windowSec} seconds, then 429 with \`retry_after\`.`,
      tags: ['owner'],
      produces: ['application/json'],
      response: withErrors({ 200: ExportOut }, 401, 429),
    },
  }, async (request, reply) => {
    const { user } = await s.auth.required(request);
    const { filename, chunks } = await s.dataExport.start(user);
    const body = Readable.from(chunks, { objectMode: false });
    body.on('error', (err) => request.log.error({ err }, 'the data export stopped half-way'));
    return reply
      .header('content-disposition', `attachment; filename="${filename}"`)
      .header('cache-control', 'no-store')
      .type('application/json; charset=utf-8')
      .send(body);
  });
}
