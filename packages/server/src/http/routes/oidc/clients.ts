import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { iso, isoOrNull } from '../../../clock.ts';
import { type ClientView, VERIFICATIONS_PER_HOUR, checkOut } from '../../../domain/oidc/clients.ts';
import { IdParam, Timestamp, withErrors } from '../../schemas/common.ts';

const Name = Type.String({ minLength: 1, maxLength: 100, description: 'what people see when their agent signs in there; 1 to 100 characters' });
const RedirectUris = Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
  minItems: 1,
  maxItems: 10,
  description: '1 to 10 distinct absolute https: URLs (http: only for localhost, 127.0.0.1 and [::1], any port, for development); no fragment, no wildcard; compared as strings at sign-in',
});
const LogoutUri = Type.String({ minLength: 1, maxLength: 2048, description: 'where the service POSTs back-channel logout tokens: https: and a public address (decisions §24)' });

const ClientIn = Type.Object({
  name: Name,
  redirect_uris: RedirectUris,
  backchannel_logout_uri: Type.Optional(LogoutUri),
  public: Type.Optional(Type.Boolean({ description: 'true for a browser or native app that cannot keep a secret (it uses PKCE); default false' })),
}, { additionalProperties: false });

const ClientPatchIn = Type.Object({
  name: Type.Optional(Name),
  redirect_uris: Type.Optional(RedirectUris),
  backchannel_logout_uri: Type.Optional(Type.Union([LogoutUri, Type.Null()], { description: 'null removes it' })),
}, { additionalProperties: false });

const Verification = Type.Object({
  url: Type.String({ description: 'the file to put `line` in (the first site)' }),
  urls: Type.Array(Type.String(), { description: 'every file a verification fetches, one per site (origin) of the redirect URIs; all must hold `line`' }),
  line: Type.String({ description: '`mandate-client=<client_id>:<token>`, on a line of its own' }),
});

const ClientOut = Type.Object({
  client_id: Type.String({ description: 'client id (`c_`)' }),
  name: Type.String(),
  redirect_uris: Type.Array(Type.String()),
  backchannel_logout_uri: Type.Union([Type.String(), Type.Null()]),
  public: Type.Boolean(),
  verified: Type.Boolean({ description: 'every site of the redirect URIs held the line at the last check; until then sign-ins show "unverified site"' }),
  verified_at: Type.Union([Timestamp, Type.Null()], { description: 'the last successful check; null while not verified' }),
  verified_origins: Type.Array(Type.String(), { description: 'sites (origins) that held the line at the last check' }),
  verification: Verification,
  secret_set_at: Type.Union([Timestamp, Type.Null()], { description: 'when the current secret was made; null for a public client' }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const Check = Type.Object({
  url: Type.String(),
  ok: Type.Boolean(),
  problem: Type.Optional(Type.String()),
  found: Type.Optional(Type.Array(Type.String(), { description: 'the `mandate-client=` lines the file held (a few, shortened)' })),
});

const Created = Type.Composite([ClientOut, Type.Object({ client_secret: Type.Optional(Type.String({ description: 'confidential clients only; shown this once' })) })]);

const clientOut = ({ client: c, verified, verification }: ClientView) => ({
  client_id: c.id,
  name: c.name,
  redirect_uris: c.redirectUris,
  backchannel_logout_uri: c.backchannelLogoutUri,
  public: c.isPublic,
  verified,
  verified_at: verified ? isoOrNull(c.verifiedAt) : null,
  verified_origins: c.verifiedOrigins,
  verification,
  secret_set_at: isoOrNull(c.secretSetAt),
  created_at: iso(c.createdAt),
  updated_at: iso(c.updatedAt),
});

const Cid = IdParam('cid', 'c');
const NOT_FOUND = '404 for an unknown id or another owner\'s client.';

export async function oidcClientRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/oidc/clients', {
    schema: {
      summary: "The owner's OIDC clients",
      description: 'The sites the owner registered so their agents can sign in there, oldest first. Secrets are never shown again. 401 when not signed in.',
      tags: ['oidc'],
      response: withErrors({ 200: Type.Array(ClientOut) }, 401),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    return (await s.oidcClients.list(user.id)).map(clientOut);
  });

  app.post('/api/oidc/clients', {
    schema: {
      summary: 'Register a site as an OIDC client',
      description: 'Answers the client with `client_secret` (confidential clients only: shown this once, stored as a hash) and `verification`, the line to publish before `POST .../verify`. An unverified client works; its sign-ins show "unverified site". 400 for a redirect URI that is not absolute https: (or loopback http:), has a fragment or a wildcard, or repeats; a logout URI the outbound guard refuses; a blank name. 422 for missing or unknown fields and wrong types or lengths. 409 past 50 clients per owner. 401 when not signed in, 403 for a cookie request from another origin.',
      tags: ['oidc'],
      body: ClientIn,
      response: withErrors({ 200: Created }, 400, 401, 403, 409),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const b = request.body;
    const { view, secret } = await s.oidcClients.create(user.id, { name: b.name, redirectUris: b.redirect_uris, backchannelLogoutUri: b.backchannel_logout_uri, isPublic: b.public });
    return { ...clientOut(view), ...(secret !== null ? { client_secret: secret } : {}) };
  });

  app.patch('/api/oidc/clients/:cid', {
    schema: {
      summary: 'Change an OIDC client',
      description: `Any of name, redirect URIs and logout URI (null removes it); the same rules as registering (400, 422). Sites no longer among the redirect URIs lose their verification; a new site must be verified. 400 for an empty change. ${NOT_FOUND} 409 when the client changed at the same time. 401, 403 as for registering.`,
      tags: ['oidc'],
      params: Cid,
      body: ClientPatchIn,
      response: withErrors({ 200: ClientOut }, 400, 401, 403, 404, 409),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const b = request.body;
    return clientOut(await s.oidcClients.update(user.id, request.params.cid, { name: b.name, redirectUris: b.redirect_uris, backchannelLogoutUri: b.backchannel_logout_uri }));
  });

  app.delete('/api/oidc/clients/:cid', {
    schema: {
      summary: 'Delete an OIDC client',
      description: `Its client id and secret stop working at once. ${NOT_FOUND} 401, 403 as for registering.`,
      tags: ['oidc'],
      params: Cid,
      response: withErrors({ 200: Type.Object({ ok: Type.Boolean() }) }, 401, 403, 404),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    await s.oidcClients.remove(user.id, request.params.cid);
    return { ok: true };
  });

  app.post('/api/oidc/clients/:cid/secret', {
    schema: {
      summary: "Rotate a client's secret",
      description: `Answers the new secret, shown this once; the old one stops working at once. 409 for a public client (it has none). ${NOT_FOUND} 401, 403 as for registering.`,
      tags: ['oidc'],
      params: Cid,
      response: withErrors({ 200: Type.Object({ client_id: Type.String(), client_secret: Type.String() }) }, 401, 403, 404, 409),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const secret = await s.oidcClients.rotateSecret(user.id, request.params.cid);
    return { client_id: request.params.cid, client_secret: secret };
  });

  app.post('/api/oidc/clients/:cid/verify', {
    schema: {
      summary: 'Verify that the owner runs the site',
      description: `Fetches \`/.well-known/service-site.txt\` at each site (origin) of the redirect URIs, through the outbound guard (https:, public addresses only, no redirects followed, 5 s, 64 kB), and looks for \`verification.line\` on a line of its own. 200 when every file holds it: the client is verified. 400 otherwise, with \`detail\` naming each file, what was found there and the line to put in it, plus \`checks\` (one per file) and \`line\`; a failed check changes nothing. 400 too when all redirect URIs are development ones (http: loopback), which cannot be verified. 429 past ${VERIFICATIONS_PER_HOUR} checks per hour. ${NOT_FOUND} 409 when the redirect URIs changed during the check. 401, 403 as for registering.`,
      tags: ['oidc'],
      params: Cid,
      response: withErrors({ 200: Type.Composite([ClientOut, Type.Object({ checks: Type.Array(Check) })]) }, 400, 401, 403, 404, 409, 429),
    },
  }, async (request) => {
    const { user } = await s.auth.required(request);
    const { view, checks } = await s.oidcClients.verify(user.id, request.params.cid);
    return { ...clientOut(view), checks: checks.map(checkOut) };
  });
}
