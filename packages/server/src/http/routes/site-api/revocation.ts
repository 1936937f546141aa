import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../services.ts';
import { COURTESY_CAP } from '../../../domain/revocation/revocation-bound.ts';
import { etagMatches } from '../../../domain/revocation/snapshot.ts';

const RevokedAgentOut = Type.Object({
  id: Type.String({ description: 'agent id' }),
  flag: Type.String({ description: '`revoked` (blocked by its owner; removed less than 720 s ago: a tombstone; or unblocked less than 720 s ago, at the rev_seq of the lifted block) or `suspicious` (informational; local verifiers do not refuse on it)' }),
  rev_seq: Type.Integer({ description: 'the revocation sequence at which the flag or removal took effect; passes minted at or before it are refused' }),
});
const RevokedGrantOut = Type.Object({
  agent: Type.String({ description: 'agent id' }),
  site: Type.String({ description: 'site id whose grant was revoked less than 720 s ago (whether or not approved again since); for an app\'s grant for a protected resource (decisions §28), the resource URL exactly: the `aud` of its passes' }),
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
        'Agents flagged now (`revoked`: blocked by their owner; `suspicious`), and the revocations of the last 720 s, each tagged with its `rev_seq`: grants revoked (also those approved again since), agents removed (tombstone, flag `revoked`), blocks lifted (flag `revoked` at the rev_seq of the lifted block).',
        'Sites in local mode fetch it about every 60 s, verify `signature` against `GET /api/v1/jwks`, and refuse a pass whose `rev_seq` is at or below a matching entry.',
        'An entry is listed only while a pass it refuses can still be alive: such a pass was minted before the revocation, so it expired within the pass lifetime (600 s) after it; 120 s more allow for clocks that differ. An entry then leaves without `rev_seq` advancing (`rev_seq` only grows); an agent that stays blocked stays listed, and no new pass is issued to it. Passes minted after a re-approval or an unblock carry a higher rev_seq and pass.',
        `Bound across accounts: entries of the last 720 s are never dropped; blocks older than that and \`suspicious\` flags refuse no live pass, and at most ${COURTESY_CAP.toLocaleString('en')} of them are listed, shared out fairly between owners (those with the most lose entries first; within an owner, newer blocks first).`,
        'The answer carries a strong `ETag` computed over `rev_seq` and the two lists (not over the signature, whose `iat` changes); a request with a matching `If-None-Match` gets `304` without a body. The ETag changes when an entry ages out.',
        '`Cache-Control: public, max-age=30`. A signature is reused for up to 1 s while the content is unchanged.',
      ].join(' '),
      tags: ['site'],
      response: { 200: SnapshotOut, 304: Type.Null({ description: 'Not modified: the snapshot named by If-None-Match is still current.' }) },
    },
  }, async (request, reply) => {
    const snapshot = await s.revocation.current();
    reply.header('etag', snapshot.etag).header('cache-control', 'public, max-age=30');
    if (etagMatches(request.headers['if-none-match'], snapshot.etag)) return reply.code(304).send();
    const jws = await s.revocation.sign(snapshot);
    // The body as SnapshotOut describes it, from pieces written once per snapshot and signature.
    const body = s.revocation.body(snapshot, jws);
    return reply
      .type('application/json; charset=utf-8')
      .header('content-length', body.reduce((n, b) => n + b.length, 0))
      .send(Readable.from(body));
  });
}
