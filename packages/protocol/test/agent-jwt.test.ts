import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { VerifyAgentJwtOptions } from '../src/index.ts';
import { createAgentJwt, generateAgentKeyPair, parsePublicP256Jwk, verifyAgentJwt } from '../src/index.ts';
import type { Agent } from './helpers.ts';
import { NOW, newAgent, rejectsWith, signRaw } from './helpers.ts';

const ID = 'ag_0123456789abcdef01234567';
let agent: Agent;
let other: Agent;
before(async () => {
  agent = await newAgent();
  other = await newAgent();
});

function opts(over: Partial<VerifyAgentJwtOptions> = {}): VerifyAgentJwtOptions {
  return { agentId: ID, keys: [agent.publicJwk], now: NOW, ...over };
}

describe('agent keys and agent JWT', () => {
  it('generateAgentKeyPair gives an extractable private key and a clean public JWK', async () => {
    const { privateKey, publicJwk } = await generateAgentKeyPair();
    assert.equal(privateKey.extractable, true);
    assert.deepEqual(parsePublicP256Jwk(publicJwk), publicJwk);
    const jwt = await createAgentJwt(privateKey, ID, { iat: NOW });
    assert.equal((await verifyAgentJwt(jwt, opts({ keys: [publicJwk] }))).type, 'agent');
  });

  it('createAgentJwt: iss = sub = agent id, type agent, ES256, typ JWT, default 300 s', async () => {
    const jwt = await createAgentJwt(agent.privateKey, ID, { iat: NOW });
    const [h] = jwt.split('.');
    assert.deepEqual(JSON.parse(Buffer.from(h ?? '', 'base64url').toString()), { alg: 'ES256', typ: 'JWT' });
    assert.deepEqual(await verifyAgentJwt(jwt, opts()), { iss: ID, sub: ID, iat: NOW, exp: NOW + 300, type: 'agent' });
  });

  it('any of several current keys verifies; a key of another agent does not', async () => {
    const jwt = await createAgentJwt(agent.privateKey, ID, { iat: NOW });
    await verifyAgentJwt(jwt, opts({ keys: [other.publicJwk, agent.publicJwk] }));
    await rejectsWith(verifyAgentJwt(jwt, opts({ keys: [other.publicJwk] })), 'invalid_token');
    await rejectsWith(verifyAgentJwt(jwt, opts({ keys: [] })), 'invalid_token');
  });

  it('lifetime, clock and identity rules', async () => {
    const mk = (o: Parameters<typeof createAgentJwt>[2], id = ID) => createAgentJwt(agent.privateKey, id, o);
    await verifyAgentJwt(await mk({ iat: NOW, lifetimeSec: 900 }), opts());
    await rejectsWith(verifyAgentJwt(await mk({ iat: NOW, lifetimeSec: 901 }), opts()), 'invalid_token');
    await verifyAgentJwt(await mk({ iat: NOW + 60 }), opts());
    await rejectsWith(verifyAgentJwt(await mk({ iat: NOW + 61 }), opts()), 'invalid_token');
    await rejectsWith(verifyAgentJwt(await mk({ iat: NOW - 300, exp: NOW }), opts()), 'token_expired');
    await rejectsWith(verifyAgentJwt(await mk({ iat: NOW, exp: NOW }), opts()), 'invalid_token');
    await rejectsWith(verifyAgentJwt(await mk({ iat: NOW }, 'ag_other'), opts()), 'invalid_token');
  });

  it('type claim, alg and sub are enforced', async () => {
    const base = { iss: ID, sub: ID, iat: NOW, exp: NOW + 60 };
    await rejectsWith(verifyAgentJwt(await signRaw({ alg: 'ES256' }, base, agent.privateKey), opts()), 'invalid_token');
    await rejectsWith(verifyAgentJwt(await signRaw({ alg: 'ES256' }, { ...base, type: 'agent', sub: 'x' }, agent.privateKey), opts()), 'invalid_token');
    const hs = new TextEncoder().encode(JSON.stringify(agent.publicJwk));
    await rejectsWith(verifyAgentJwt(await signRaw({ alg: 'HS256' }, { ...base, type: 'agent' }, hs), opts()), 'invalid_token');
    for (const g of [undefined, '', 'a.b', 7]) await rejectsWith(verifyAgentJwt(g, opts()), 'invalid_token');
  });
});
