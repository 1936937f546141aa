import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { agentInstallCommand, agentPackageSpec, agentProgram } from '@mandate/protocol/agent-command';
import type { Services } from '../../../services.ts';
import { SDK_DOWNLOADS } from '../../../downloads/sdk-tarballs.ts';
import { ErrorBody } from '../../schemas/common.ts';

const PACKAGES: Record<(typeof SDK_DOWNLOADS)[number], string> = {
  agent: '@mandate/agent: the agent SDK and the `mandate-agent` command-line tool',
  site: '@mandate/site: the site SDK that verifies agent requests (with middleware for node:http, Express and Fastify)',
};

const AgentToolOut = Type.Object({
  base_url: Type.String({ description: 'this service (BASE_URL): the `--service` of `mandate-agent pair` and `init`' }),
  agent_package: Type.Union([Type.String(), Type.Null()], { description: 'the registry package the operator named (AGENT_PACKAGE), or null: the tool comes from this service' }),
  package: Type.String({ description: 'what npm installs: `<BASE_URL>/download/agent`, or the registry package the operator named (AGENT_PACKAGE)' }),
  run: Type.String({ description: 'the command that runs the tool without installing it: `npx --yes --package=<package> mandate-agent`; add a command such as `pair CODE --service <BASE_URL>`' }),
  install: Type.String({ description: 'the command that installs the tool and the agent SDK in a project: `npm install <package>`' }),
});

/**
 * The SDKs from the service itself (decisions §26): the npm tarballs the build made, with
 * @mandate/protocol inside, so `npx --yes --package=<BASE_URL>/download/agent mandate-agent …`
 * works on a machine with only Node and npm. HEAD answers the same headers (Fastify's HEAD route).
 */
export async function sdkDownloadRoutes(app: FastifyInstance, s: Services): Promise<void> {
  for (const which of SDK_DOWNLOADS) {
    app.get(`/download/${which}`, {
      schema: {
        summary: `The ${which} SDK as an npm tarball`,
        description: `${PACKAGES[which]}, with @mandate/protocol bundled inside; install it with \`npm install <BASE_URL>/download/${which}\`. Built with the service (\`npm run build\`). \`Content-Digest\` (RFC 9530) carries its SHA-256; \`If-None-Match\` with its ETag answers 304. 404 when the build did not make it.`,
        tags: ['downloads'],
        response: {
          200: { description: `mandate-${which}-<version>.tgz`, content: { 'application/gzip': { schema: Type.String({ format: 'binary' }) } } },
          304: { description: 'unchanged since the ETag sent in If-None-Match' },
          404: ErrorBody,
        },
      },
    }, async (request, reply) => {
      const tarball = await s.sdkTarballs.get(which);
      reply
        .header('etag', tarball.etag)
        // Revalidated at each use: a new version of the service serves a new package at once.
        .header('cache-control', 'no-cache');
      if (unchanged(request.headers['if-none-match'], tarball.etag)) return reply.code(304).send();
      return reply
        .header('content-type', 'application/gzip')
        .header('content-disposition', `attachment; filename="${tarball.filename}"`)
        .header('content-digest', tarball.contentDigest)
        .send(tarball.body);
    });
  }

  app.get('/api/agent-tool', {
    schema: {
      summary: 'How to install and run the agent tool from this service',
      description: 'The commands the owner app shows (decisions §26), rendered from BASE_URL and AGENT_PACKAGE. Public: the same for everyone.',
      tags: ['downloads'],
      response: { 200: AgentToolOut },
    },
  }, async () => {
    const source = { baseUrl: s.config.baseUrl, agentPackage: s.config.agentPackage };
    return { base_url: source.baseUrl, agent_package: source.agentPackage, package: agentPackageSpec(source), run: agentProgram(source), install: agentInstallCommand(source) };
  });
}

/** If-None-Match (RFC 9110 §13.1.2): any listed tag, compared weakly (npm's cache may send `W/"…"`), or `*`. */
export function unchanged(ifNoneMatch: string | undefined, etag: string): boolean {
  return ifNoneMatch?.split(',').some((tag) => ['*', etag].includes(tag.trim().replace(/^W\//, ''))) ?? false;
}
