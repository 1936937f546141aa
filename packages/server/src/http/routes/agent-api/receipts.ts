import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { withErrors } from '../../schemas/common.ts';
import { TxnParams } from '../../schemas/approvals.ts';
import { bearerToken } from '../../bearer.ts';

const B64u = (description: string) => Type.String({ description: `${description} (base64url)` });

const ReceiptOut = Type.Object({
  v: Type.Literal(1),
  txn: Type.String({ description: 'the request id' }),
  aud: Type.String({ description: 'the site the approval is for' }),
  action: Type.String({ description: 'the action approved, as the agent wrote it' }),
  details_digest: Type.Union([Type.String(), Type.Null()], { description: 'base64url SHA-256 of the JCS form of the details approved; null for an approval without details' }),
  user: Type.String({ description: "the approving person's id" }),
  nonce: Type.String({ description: '128 random bits (base64url) the challenge commits to' }),
  approved_at: Type.String({ format: 'date-time' }),
  webauthn: Type.Object({
    credential_id: B64u('the passkey credential id'),
    authenticator_data: B64u('authenticatorData as the passkey made it'),
    client_data_json: B64u('clientDataJSON as the browser wrote it'),
    signature: B64u('the assertion signature'),
  }),
  credential_key: Type.Object({
    kty: Type.String(),
    alg: Type.String({ description: 'ES256, RS256 or EdDSA' }),
    crv: Type.Optional(Type.String()),
    x: Type.Optional(Type.String()),
    y: Type.Optional(Type.String()),
    n: Type.Optional(Type.String()),
    e: Type.Optional(Type.String()),
  }, { description: "the passkey's public key as a JWK" }),
  attestation: Type.String({ description: 'JWT, typ `receipt-key+jwt`, signed by the service keys (GET /api/v1/jwks): `user`, `credential_id`, `credential_key`, `registered_at`' }),
});

const DESCRIPTION = `The receipt of an approved step-up or agent approval (decisions §29): the WebAuthn assertion the owner's passkey
made, whose challenge is \`base64url(SHA-256(JCS({v: 1, txn, aud, action, details_digest, user, nonce})))\`, the passkey's
public key, and an attestation by the service binding that key to the person. Check it with \`verifyReceipt\` from
\`@mandate/protocol\` or \`@mandate/site\`, offline, with the service's JWKS and origin (docs/sites/receipts.md).

Two callers:
- the agent that filed the request, with header \`X-Agent-JWT\`;
- the site that filed a site step-up (POST /api/v1/stepup/site), with \`Authorization: Bearer <pass>\` (when no
  \`X-Agent-JWT\` is sent): as for its poll, a live pass of the same agent, access (grant) and site. Fetch it once the
  owner approved and keep it: the service holds the request a week after it ended.

- **400** \`txn_id\` is not a request id.
- **401** neither header, an invalid \`X-Agent-JWT\`, or a pass that does not verify or has expired. **403** the agent was
  revoked or removed by its owner (or, for a pass, its access was revoked).
- **404** unknown \`txn_id\`, a request another agent filed, or, with a pass, a request that is not a site step-up filed
  with a pass of that agent, access and site (or no longer held).
- **409** no receipt for this request: not answered yet (ask again once approved), denied or expired, an access request
  or plan (only step-ups and agent approvals leave one), or the passkey that approved has since been removed (its key
  can no longer be attested).`;

export async function receiptRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/v1/receipts/:txn_id', {
    schema: {
      summary: 'The receipt of an approval: proof that the owner\'s passkey approved exactly this',
      description: DESCRIPTION,
      tags: ['agent'],
      params: TxnParams,
      headers: Type.Object({
        'x-agent-jwt': Type.Optional(Type.String({ description: 'an agent JWT of the agent that filed the request' })),
        authorization: Type.Optional(Type.String({ description: '`Bearer <pass>`: the site that filed a site step-up' })),
      }),
      response: withErrors({ 200: ReceiptOut }, 400, 401, 403, 404, 409),
    },
  }, async (request) => {
    const header = request.headers['x-agent-jwt'];
    if (header === undefined && request.headers.authorization !== undefined) return s.receipts.forSite(request.params.txn_id, bearerToken(request));
    return s.receipts.forAgent(request.params.txn_id, Array.isArray(header) ? header[0] : header);
  });
}
