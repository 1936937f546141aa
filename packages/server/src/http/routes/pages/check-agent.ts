/**
 * /tools/check-agent: the HTML twin of POST /api/v1/check-agent (decisions §22), in the public
 * pages' layout. GET `?agent=` looks up an address; POST (a form) checks a pasted request. A
 * refusal (bad input, too many checks) is shown on the page with its status.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { CheckAgentView, PublicSite } from '@mandate/web';
import type { Services } from '../../../services.ts';
import { AppError } from '../../../domain/errors.ts';
import type { CheckResult } from '../../../domain/wba/check-agent.ts';

const FORM = 'application/x-www-form-urlencoded';
const PAGE = 'Check a Web Bot Auth agent: the HTML page of `POST /api/v1/check-agent`, in the site\'s layout, readable on a phone.';

async function answer(reply: FastifyReply, site: PublicSite, view: CheckAgentView, run: (() => Promise<CheckResult>) | null): Promise<FastifyReply> {
  let status = 200;
  if (run !== null) {
    try {
      view.result = await run();
    } catch (e) {
      if (!(e instanceof AppError) || e.status >= 500) throw e;
      status = e.status;
      view.error = e.status === 429 ? `Too many checks from this address: try again in ${Math.ceil(Number(e.extra.retry_after ?? 60) / 60)} minutes.` : e.detail;
      for (const [name, value] of Object.entries(e.headers)) reply.header(name, value);
    }
  }
  return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(site.checkAgent(view));
}

export async function checkAgentPageRoutes(base: FastifyInstance, s: Services, site: PublicSite): Promise<void> {
  await base.register(async (app) => {
    // Form posts only here: a pasted request of 16 kB is up to three times as long form-encoded.
    app.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });
    app.get('/tools/check-agent', {
      schema: {
        // A page, so out of the OpenAPI description like every page; its API is POST /api/v1/check-agent.
        hide: true,
        summary: 'Check an agent (page)',
        description: `${PAGE} With \`agent\`, the keys of the directory at that address (as \`{address}\`); without, the empty forms.`,
        tags: ['pages'],
        querystring: Type.Object({ agent: Type.String({ default: '', maxLength: 4096, description: 'an agent\'s address (its `Signature-Agent`)' }) }),
      },
    }, async (request, reply) => {
      const agent = (request.query as { agent: string }).agent.trim();
      return answer(reply, site, { agent, request: '' }, agent === '' ? null : () => s.agentChecks.check({ address: agent }, request.ip));
    });
    app.post('/tools/check-agent', {
      schema: {
        hide: true,
        summary: 'Check a pasted request (page)',
        description: `${PAGE} A form post (\`${FORM}\`) of \`request\`: the pasted HTTP request (as \`{request}\`).`,
        tags: ['pages'],
        body: Type.Object({ request: Type.String({ maxLength: 60_000, description: 'the pasted request line and headers' }) }),
      },
    }, async (request, reply) => {
      const text = (request.body as { request: string }).request;
      return answer(reply, site, { agent: '', request: text }, () => s.agentChecks.check({ request: text }, request.ip));
    });
  });
}
