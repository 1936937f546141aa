import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { appVersion } from '@mandate/web';
import type { Services } from '../../services.ts';

const USER_AGENT_MAX = 512;

/** What the owner app's browser side asks the server: its version, and what passkeys need here (decisions §23). */
export async function browserRoutes(app: FastifyInstance, s: Services): Promise<void> {
  const rp = new URL(s.config.baseUrl);
  app.get('/api/page-version', {
    schema: {
      summary: 'The version of the owner app this server serves',
      description: 'A hash of the app\'s assets (script, styles, icons, manifest, page): it changes whenever any of them changes. The open app compares it with its own and reloads itself at a safe moment (not during a passkey ceremony or with unsaved input). Public, never cached.',
      tags: ['meta'],
      response: { 200: Type.Object({ version: Type.String({ description: '12 characters of base64url' }) }) },
    },
  }, async (_request, reply) => {
    void reply.header('cache-control', 'no-store');
    return { version: appVersion() };
  });

  app.get('/api/browserinfo', {
    schema: {
      summary: 'What this server expects of a browser for passkeys',
      description: 'A diagnostic for passkey trouble: the relying party id and origin WebAuthn ceremonies are bound to (from BASE_URL), whether the page must be a secure context (always: browsers offer passkeys only on https or http://localhost), and the User-Agent header as the server received it (at most 512 characters). Public, never cached.',
      tags: ['meta'],
      response: {
        200: Type.Object({
          rp_id: Type.String({ description: 'the host name passkeys are made for (no port)' }),
          origin: Type.String({ description: 'the origin the browser must show: a ceremony from any other origin is refused' }),
          secure_context_required: Type.Boolean(),
          user_agent: Type.String({ description: 'the User-Agent header as received; empty when absent' }),
        }),
      },
    },
  }, async (request, reply) => {
    void reply.header('cache-control', 'no-store');
    const ua = request.headers['user-agent'] ?? '';
    return { rp_id: rp.hostname, origin: rp.origin, secure_context_required: true, user_agent: ua.slice(0, USER_AGENT_MAX) };
  });
}
