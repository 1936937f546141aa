import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../services.ts';
import { ErrorBody, Timestamp } from '../schemas/common.ts';
import { READINESS_CACHE_MS, READINESS_LIMIT } from '../../domain/readiness/readiness.ts';

/** What each of the five fields means when true (the same words head the `details`). */
const MEANS = {
  https: 'the site answered a request for its verification file over https with a certificate this service trusts (any status: the answer is what counts)',
  reachable: 'this service reached the site through its outbound guard (public address, 5 s, no redirects followed) and got an answer below 500; under OUTBOUND_ALLOW_LOOPBACK (development) plain http is tried when https fails',
  verification_file: '`/.well-known/service-site.txt` answered 200 and holds the `mandate-client=` or `mandate-operator=` line of a client or operator registered on this instance for this host',
  oidc_client: 'an OIDC client registered on this instance has a redirect URI on this host (`details` says how many are verified); needed only to sign agents in with OpenID Connect',
  operator: 'an operator registered on this instance has this host as its domain (`details` says whether verified and switched on); needed only by companies that run agents for many people',
} as const;

const Why = (key: keyof typeof MEANS) => Type.String({ description: `in words, why \`${key}\` is true or false: what was found` });

export const ReadinessOut = Type.Object({
  site: Type.String({ description: 'the site id checked: lower-case host[:port], the default port left out' }),
  https: Type.Boolean({ description: `true when ${MEANS.https}` }),
  reachable: Type.Boolean({ description: `true when ${MEANS.reachable}` }),
  verification_file: Type.Boolean({ description: `true when ${MEANS.verification_file}` }),
  oidc_client: Type.Boolean({ description: `true when ${MEANS.oidc_client}` }),
  operator: Type.Boolean({ description: `true when ${MEANS.operator}` }),
  details: Type.Object({
    https: Why('https'),
    reachable: Why('reachable'),
    verification_file: Why('verification_file'),
    oidc_client: Why('oidc_client'),
    operator: Why('operator'),
  }, { description: 'for people: one sentence per field saying why it is true or false (what answered, what is missing, what is registered here); the /check page shows these' }),
  checked_at: Timestamp,
});

const ReadinessQuery = Type.Object({
  site: Type.Optional(Type.String({ description: 'the site: a host name (`shop.example`, `shop.example:8443`) or an address (`https://shop.example/`), of which the host counts' })),
});

/** GET /api/readiness (decisions §22): the JSON twin of /check. */
export async function readinessRoutes(app: FastifyInstance, s: Services): Promise<void> {
  app.get<{ Querystring: { site?: string } }>('/api/readiness', {
    schema: {
      summary: "A site's readiness for agents with this instance",
      description: `For a site owner setting up: does the site answer over https, can this service reach it, does it publish a verification file with a line of a client or operator registered here, and is an OIDC client or operator registered here for its host. The five answers are booleans; \`details\` says why each is what it is, in words. Public, no sign-in. Sites are fetched only through the outbound guard (https only, public addresses, no redirects, 5 s, 64 kB). An answer is kept ${READINESS_CACHE_MS / 60_000} minutes and served to everyone who asks meanwhile (same \`checked_at\`), on every node. ${READINESS_LIMIT.perAddress} checks per hour per client address (cached answers count too): 429 with Retry-After. 400 when \`site\` is missing or not a host name. The HTML twin is \`GET /check?site=\`.`,
      tags: ['site'],
      querystring: ReadinessQuery,
      response: { 200: ReadinessOut, 400: ErrorBody, 429: ErrorBody },
    },
  }, async (request, reply) => {
    const report = await s.readiness.check(request.query.site ?? '', request.ip);
    void reply.header('cache-control', 'no-store');
    return report;
  });
}
