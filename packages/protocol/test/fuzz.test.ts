import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import {
  ProtocolError,
  verifyAgentJwt,
  verifyDpopProof,
  verifyDpopSignature,
  verifyPass,
  verifyPassAndProof,
  verifyRevocationSnapshot,
  verifyStepupToken,
} from '../src/index.ts';
import type { Agent, Service } from './helpers.ts';
import { ISSUER, KID, NOW, SITE, URL_, b64json, mintPass, newAgent, newService, rawProof } from './helpers.ts';

/*
 * Whatever bytes arrive, a verifier answers with a ProtocolError (a verify answer), never with
 * a TypeError or a jose error that would surface as a 5xx.
 */

let agent: Agent;
let svc: Service;
let pass: string;
let proof: string;
before(async () => {
  agent = await newAgent();
  svc = await newService();
  pass = await mintPass(svc, agent);
  proof = await rawProof(agent, pass);
});

async function onlyProtocolErrors(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ProtocolError, `non-protocol error: ${e instanceof Error ? e.stack : String(e)}`);
  }
}

async function allVerifiers(input: unknown): Promise<void> {
  const common = { keys: svc.resolver, issuer: ISSUER, now: NOW };
  await onlyProtocolErrors(verifyPass(input, { ...common, site: SITE }));
  await onlyProtocolErrors(verifyDpopSignature(input));
  await onlyProtocolErrors(verifyDpopProof(input, { method: 'POST', url: URL_, accessToken: pass, now: NOW, jkt: agent.jkt }));
  await onlyProtocolErrors(verifyStepupToken(input, common));
  await onlyProtocolErrors(verifyRevocationSnapshot(input, common));
  await onlyProtocolErrors(verifyAgentJwt(input, { agentId: 'ag_x', keys: [agent.publicJwk], now: NOW }));
  await onlyProtocolErrors(
    verifyPassAndProof({ ...common, accessToken: input, dpop: input, method: 'POST', url: URL_, site: SITE, consumeJti: async () => true }),
  );
  await onlyProtocolErrors(
    verifyPassAndProof({ ...common, accessToken: pass, dpop: input, method: 'POST', url: URL_, site: SITE, consumeJti: async () => true }),
  );
}

const b64seg = fc.stringMatching(/^[A-Za-z0-9_-]{0,120}$/);
const headerish = fc.oneof(
  fc.jsonValue(),
  fc.record(
    {
      typ: fc.constantFrom('at+jwt', 'dpop+jwt', 'stepup+jwt', 'revocation+jwt', 'JWT', 5),
      alg: fc.constantFrom('ES256', 'none', 'HS256', 'ES384', null),
      kid: fc.oneof(fc.constant(KID), fc.string(), fc.integer(), fc.jsonValue()),
      jwk: fc.oneof(fc.jsonValue(), fc.constant({ kty: 'EC', crv: 'P-256', x: 'A', y: 'B' })),
      crit: fc.oneof(fc.constant(['b64']), fc.jsonValue()),
      b64: fc.boolean(),
    },
    { requiredKeys: ['typ', 'alg'] },
  ),
);

describe('verifiers on random input reject with ProtocolError only', () => {
  it('random strings and values', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ unit: 'binary' }), fc.string(), fc.anything()), allVerifiers),
      { numRuns: 300 },
    );
  });

  it('random dot-separated segments (2 to 6)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(b64seg, { minLength: 2, maxLength: 6 }), (segs) => allVerifiers(segs.join('.'))),
      { numRuns: 300 },
    );
  });

  it('JWS-shaped tokens with random JSON headers and payloads', async () => {
    await fc.assert(
      fc.asyncProperty(headerish, fc.jsonValue(), fc.stringMatching(/^[A-Za-z0-9_-]{1,100}$/), (h, p, s) =>
        allVerifiers(`${b64json(h)}.${b64json(p)}.${s}`),
      ),
      { numRuns: 300 },
    );
  });

  it('valid tokens with one character replaced anywhere', async () => {
    const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ';
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('pass', 'proof'), fc.nat(), fc.constantFrom(...chars), async (which, i, c) => {
        const token = which === 'pass' ? pass : proof;
        const at = i % token.length;
        await allVerifiers(token.slice(0, at) + c + token.slice(at + 1));
      }),
      { numRuns: 300 },
    );
  });
});
