import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { WBA_DIRECTORY_MAX_LIFETIME_SEC, WBA_DIRECTORY_MEDIA_TYPE, WBA_DIRECTORY_PATH } from '@mandate/protocol';
import type { Services } from '../../../services.ts';
import { agentBodyChecks } from '../../body-checks.ts';
import { withErrors } from '../../schemas/common.ts';
import { DIRECTORY_MAX_AGE_SEC, type ServedDirectory, WBA_KEYS_PER_HOUR, WBA_PROOFS_PER_HOUR } from '../../../domain/wba/web-bot-auth.ts';
import { notFound } from '../../../domain/errors.ts';

const AgentAuth = {
  agent_id: Type.String({ minLength: 1, maxLength: 64 }),
  agent_jwt: Type.String({ minLength: 1, maxLength: 8192 }),
};

const WbaKeyIn = Type.Object({
  ...AgentAuth,
  jwk: Type.Object({
    kty: Type.String({ maxLength: 16, description: '`OKP`' }),
    crv: Type.String({ maxLength: 16, description: '`Ed25519`' }),
    x: Type.String({ maxLength: 64, description: 'the public key, base64url of 32 bytes' }),
  }, { additionalProperties: true, description: 'the agent\'s Ed25519 public key as a JWK; a private key (`d`) is refused' }),
});

const HeaderValue = (description: string) => Type.String({ minLength: 1, maxLength: 4096, description });
const WbaProofIn = Type.Object({
  ...AgentAuth,
  headers: Type.Object({
    'Content-Digest': HeaderValue('`sha-256=:<base64>:` of the directory bytes'),
    'Signature-Input': HeaderValue('one signature: `("@authority";req "content-digest");created=...;expires=...;keyid="<thumbprint>";alg="ed25519";tag="http-message-signatures-directory"`'),
    Signature: HeaderValue('the Ed25519 signature under the same label'),
  }, { additionalProperties: false }),
});

const ADDRESS = `With \`WBA_AGENT_DOMAIN\` set, the agent's address is \`https://a-<12 hex>.<domain>\` (its directory at \`${WBA_DIRECTORY_PATH}\` there, routed by Host); without it, \`<BASE_URL>/wba/a-<12 hex>\`. The label is the same for the agent across key changes.`;
const DIRECTORY_ANSWER = `\`Content-Type: ${WBA_DIRECTORY_MEDIA_TYPE}\`, \`Cache-Control: max-age=${DIRECTORY_MAX_AGE_SEC}\`. The body is the agent's directory \`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":...,"x":...,"use":"sig"}]}\` with the agent's \`Content-Digest\`, \`Signature-Input\` and \`Signature\`; \`{"keys":[]}\` (unsigned) while no proof was uploaded for the current key, and for an agent removed, revoked or blocked.`;

function sendDirectory(reply: FastifyReply, d: ServedDirectory): FastifyReply {
  reply.code(200).header('content-type', WBA_DIRECTORY_MEDIA_TYPE).header('cache-control', `max-age=${DIRECTORY_MAX_AGE_SEC}`);
  for (const [name, value] of Object.entries(d.headers)) reply.header(name, value);
  // A Buffer, so the bytes go out as signed and no charset is added to the media type.
  return reply.send(Buffer.from(d.body));
}

const DirectoryResponse = { 200: { description: DIRECTORY_ANSWER, content: { [WBA_DIRECTORY_MEDIA_TYPE]: { schema: Type.Object({ keys: Type.Array(Type.Object({}, { additionalProperties: true })) }) } } } };

/** Web Bot Auth (decisions §22): the agent's key, its directory signature, and the directories served. */
export async function wbaRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/api/v1/wba/key', {
    config: { bodyChecks: agentBodyChecks('agent_id') },
    schema: {
      summary: 'Publish the agent\'s Web Bot Auth key',
      description: `Publishes or replaces the agent's Ed25519 public key. The answer gives \`signature_agent\` (the address to send as \`Signature-Agent\`), \`host\` (the directory's \`@authority\`) and \`directory\`, the exact bytes to sign for \`POST /api/v1/wba/proof\`. ${ADDRESS} A new key serves \`{"keys":[]}\` until its proof is uploaded. 400 a key that is not a public Ed25519 JWK (wrong \`kty\` or \`crv\`, a private \`d\`, an \`x\` that is not 32 bytes); 409 the key is another agent's; ${WBA_KEYS_PER_HOUR} keys per agent per hour, then 429. 401 invalid agent JWT; 403 agent revoked.`,
      tags: ['agent'],
      body: WbaKeyIn,
      response: withErrors({ 200: Type.Object({
        signature_agent: Type.String({ description: 'the agent\'s address: its `Signature-Agent`' }),
        host: Type.String({ description: 'the directory\'s `@authority`, covered by the directory signature with `;req`' }),
        directory: Type.String({ description: 'the exact directory body whose `Content-Digest` (sha-256) the proof signs' }),
      }) }, 400, 401, 403, 409, 429),
    },
  }, async (request) => {
    const agent = await s.agents.verifyJwt(request.body.agent_jwt, request.body.agent_id);
    return s.wba.setKey(agent, request.body.jwk);
  });

  app.post('/api/v1/wba/proof', {
    config: { bodyChecks: agentBodyChecks('agent_id') },
    schema: {
      summary: 'Upload the directory signature (proof)',
      description: `The directory response signature the agent made with its current key (RFC 9421): tag \`http-message-signatures-directory\`, covering exactly \`"@authority";req\` (the \`host\` of \`POST /api/v1/wba/key\`) and \`"content-digest"\` (sha-256 of the \`directory\` bytes), \`keyid\` the key's thumbprint, \`expires\` − \`created\` at most ${WBA_DIRECTORY_MAX_LIFETIME_SEC} s and not yet expired. Once checked, the directory is served with these headers; upload a new one before \`expires_at\` (the SDK does). 400 with \`detail\` for each rule broken (tampered, expired, too long, wrong tag, wrong key, wrong authority, no key yet); 409 the key changed meanwhile; ${WBA_PROOFS_PER_HOUR} per agent per hour, then 429. 401 invalid agent JWT; 403 agent revoked.`,
      tags: ['agent'],
      body: WbaProofIn,
      response: withErrors({ 200: Type.Object({ expires_at: Type.Integer({ description: 'the signature\'s `expires` (epoch seconds)' }) }) }, 400, 401, 403, 409, 429),
    },
  }, async (request) => {
    const agent = await s.agents.verifyJwt(request.body.agent_jwt, request.body.agent_id);
    return s.wba.setProof(agent, request.body.headers);
  });

  const Label = Type.Object({ label: Type.String({ maxLength: 64, description: 'the agent\'s label, `a-<12 hex>`' }) });
  for (const path of ['/wba/:label', `/wba/:label${WBA_DIRECTORY_PATH}`]) {
    app.get(path, {
      schema: {
        summary: path === '/wba/:label' ? 'An agent\'s key directory (its Signature-Agent address)' : 'An agent\'s key directory (well-known path)',
        description: `The key directory of the agent labelled \`label\`, at its address without \`WBA_AGENT_DOMAIN\`. ${DIRECTORY_ANSWER} An unknown label serves \`{"keys":[]}\` too.`,
        tags: ['agent'],
        params: Label,
        response: DirectoryResponse,
      },
    }, async (request, reply) => sendDirectory(reply, await s.wba.directory(request.params.label)));
  }

  app.get(WBA_DIRECTORY_PATH, {
    schema: {
      summary: 'An agent\'s key directory (by Host)',
      description: `With \`WBA_AGENT_DOMAIN\` set: the key directory of the agent whose address is the request's Host (\`a-<12 hex>.<domain>\`). ${DIRECTORY_ANSWER} 404 for any other Host.`,
      tags: ['agent'],
      response: { ...DirectoryResponse, ...withErrors({}, 404) },
    },
  }, async (request, reply) => {
    const label = s.wba.labelOfHost(request.host);
    if (label === undefined) throw notFound('no agent directory at this host');
    return sendDirectory(reply, await s.wba.directory(label));
  });
}
