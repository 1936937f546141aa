import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../services.ts';
import { etagMatches } from '../../../domain/revocation/snapshot.ts';

const RevokedAgentOut = Type.Object({
  id: Type.String({ description: 'agent id' }),
  flag: Type.String({ description: '`revoked` (blocked by its owner, removed: a tombstone, or unblocked less than 600 s ago, at the rev_seq of the lifted block) or `suspicious` (informational; local verifiers do not refuse on it)' }),
  rev_seq: Type.Integer({ description: 'the revocation sequence at which the flag or removal took effect; passes minted at or before it are refused' }),
});
const RevokedGrantOut = Type.Object({
  agent: Type.String({ description: 'agent id' }),
  site: Type.String({ description: 'site id whose grant was revoked (and not approved again, or approved again less than 600 s ago)' }),
  rev_seq: Type.Integer({ description: 'the revocation sequence of the revocation; passes for this agent and site minted at or before it are refused' }),
});
export const SnapshotOut = Type.Object({
  signature: Type.String({ description: 'JWT (header typ `revocation+jwt`, ES256, kid from `GET /api/v1/jwks`) with claims `type` `revocation`, `iss`, `iat`, `rev_seq`, `revoked_agents`, `revoked_grants`: the same content as the fields beside it. Only the signed content is to be trusted.' }),
  rev_seq: Type.Integer({ description: 'the revocation sequence this snapshot reflects; it only grows' }),
  revoked_agents: Type.Array(RevokedAgentOut),
  revoked_grants: Type.Array(RevokedGrantOut),
});

export async function revocationRoutes(app: FastifyInstance, s: Services): Promise<void> {
  app.get('/api/v1/revocation', {
    schema: {
      summary: 'The signed revocation snapshot',
      description: [
        'Agents with a non-ok global flag or removed (tombstone, flag `revoked`) and revoked grants, each tagged with its `rev_seq`.',
        'Sites in local mode fetch it about every 60 s, verify `signature` against `GET /api/v1/jwks`, and refuse a pass whose `rev_seq` is at or below a matching entry.',
        'A lifted revocation stays listed for 600 s (the pass lifetime): a revoked grant superseded by a new approval until 600 s after the re-approval, an unblocked agent (as `revoked`, at its block\'s rev_seq) until 600 s after the unblock; passes minted after the change carry a higher rev_seq and pass. The entry then leaves without rev_seq advancing.',
        'The answer carries a strong `ETag` computed over `rev_seq` and the two lists (not over the signature, whose `iat` changes); a request with a matching `If-None-Match` gets `304` without a body.',
        '`Cache-Control: public, max-age=30`. A signature is reused for up to 30 s while the content is unchanged.',
      ].join(' '),
      tags: ['site'],
      response: { 200: SnapshotOut, 304: Type.Null({ description: 'Not modified: the snapshot named by If-None-Match is still current.' }) },
    },
  }, async (request, reply) => {
    const snapshot = await s.revocation.current();
    reply.header('etag', snapshot.etag).header('cache-control', 'public, max-age=30');
    if (etagMatches(request.headers['if-none-match'], snapshot.etag)) return reply.code(304).send();
    const signature = await s.revocation.sign(snapshot);
    // The body as SnapshotOut describes it, serialised once per snapshot and signature.
    return reply.type('application/json; charset=utf-8').send(s.revocation.body(snapshot, signature));
  });
}
