import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { REPORT_KINDS } from '../../../domain/reputation/score.ts';
import { ReadableText, withErrors } from '../../schemas/common.ts';

const ReportKind = Type.Union(REPORT_KINDS.map((kind) => Type.Literal(kind)));
const ReportIn = Type.Object({
  access_token: Type.String({ minLength: 1, maxLength: 16384, description: 'a pass the agent presented at the reporting site; it may have expired but must have been minted at most 7 days ago' }),
  kind: ReportKind,
  detail: Type.Optional(ReadableText({ maxLength: 2000, default: '' })),
});
const ReportOut = Type.Object({
  ok: Type.Literal(true),
  agent_id: Type.String({ description: 'the pass\'s `sub`' }),
  site: Type.String({ description: 'the reporting site: the pass\'s `aud`' }),
  kind: ReportKind,
  counted: Type.Boolean({ description: 'false when a `good` report did not replace this site\'s negative report (which still counts); true otherwise' }),
});

export async function reportRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/api/v1/reports', {
    schema: {
      summary: 'A site reports an agent',
      description: [
        'The `access_token` is the evidence: a pass we signed (header typ `at+jwt`, claim `type` `access`, `iss` our base URL), minted (`iat`) at most 7 days ago; it may have expired.',
        'The reporting site is the pass\'s `aud`, the agent its `sub`. Each site counts once: its latest report replaces the previous one,',
        'except that a `good` report never replaces a negative one (`spam`, `abuse`, `fraud`, `policy`, `scraping`): it is answered 200 with `counted: false`. Another negative report does replace it.',
        'Sites are not authenticated yet: the reporter is known only by the pass, and the agent holds passes for that site too, so it could report in the site\'s name; hence the rule above.',
        'Known limitation: an owner can approve their own agent for sites of their choosing and report `good` with those passes; such reports count (+2 each) until sites are authenticated.',
        'A forged, foreign, malformed or too old token: 400 with `detail` saying why. 30 reports per site per minute, then 429.',
        'The agent\'s owner sees a `report.received` record in Activity.',
      ].join(' '),
      tags: ['site'],
      body: ReportIn,
      response: withErrors({ 200: ReportOut }, 400, 429),
    },
  }, async (request) => {
    const { access_token, kind, detail } = request.body;
    const r = await s.reports.submit({ accessToken: access_token, kind, detail: detail ?? '', ip: request.ip });
    return { ok: true as const, agent_id: r.agentId, site: r.site, kind: r.kind, counted: r.counted };
  });
}
