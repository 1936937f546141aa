import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.ts';
import { metaRoutes } from './meta.ts';
import { accountRoutes } from './owner/accounts.ts';
import { agentRoutes } from './owner/agents.ts';
import { passkeyRoutes } from './owner/passkeys.ts';
import { jwksRoutes } from './site-api/jwks.ts';
import { adminKeyRoutes } from './admin/keys.ts';
import { pageRoutes } from './pages/index.ts';

/** Every route module, registered in one place. */
export async function registerRoutes(app: FastifyInstance, s: Services): Promise<void> {
  for (const routes of [metaRoutes, accountRoutes, agentRoutes, passkeyRoutes, jwksRoutes, adminKeyRoutes, pageRoutes]) {
    await routes(app, s);
  }
}
