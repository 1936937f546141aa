import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { ResourcePassClaims, VerifyResourceRequestInput } from '../src/index.ts';
import { createDpopProof, revocationVerdict, signResourcePass, verifyPass, verifyResourcePass, verifyResourceRequest } from '../src/index.ts';
import type { Agent, Service } from './helpers.ts';
import { ISSUER, KID, NOW, mintPass, newAgent, newService, passClaims, rejectsWith, revocationClaims } from './helpers.ts';

const RESOURCE = 'https://mcp.shop.example/mcp';
const CALL_URL = 'https://mcp.shop.example/mcp';

let client: Agent;
let other: Agent;
let svc: Service;

before(async () => {
  client = await newAgent();
  other = await newAgent();
  svc = await newService();
});

function resourceClaims(over: Partial<ResourcePassClaims> = {}, bound = true): ResourcePassClaims {
  const { cnf: _cnf, ...base } = passClaims(client, { aud: RESOURCE });
  const claims: ResourcePassClaims = { ...base, client_id: 'https://app.example/client.json', ...over };
  if (bound) claims.cnf = { dpop: client.jkt, jkt: client.jkt };
  return claims;
}

const mint = (over: Partial<ResourcePassClaims> = {}, bound = true): Promise<string> => signResourcePass(svc.privateKey, KID, resourceClaims(over, bound));

function input(accessToken: string, over: Partial<VerifyResourceRequestInput> = {}): VerifyResourceRequestInput {
  const seen = new Set<string>();
  return {
    accessToken, scheme: 'Bearer', method: 'POST', url: CALL_URL, resource: RESOURCE, keys: svc.resolver, issuer: ISSUER, now: NOW,
    consumeJti: async (jti) => (seen.has(jti) ? false : (seen.add(jti), true)),
    ...over,
  };
}

const proof = (token: string, key: Agent = client, over: { htu?: string; htm?: string } = {}): Promise<string> =>
  createDpopProof(key.privateKey, key.publicJwk, { htm: over.htm ?? 'POST', htu: over.htu ?? CALL_URL, accessToken: token, iat: NOW });

describe('resource passes (decisions §28)', () => {
  it('a bearer pass (no cnf) is accepted with the Bearer scheme, for exactly its resource', async () => {
    const token = await mint({}, false);
    const { claims, proof: p } = await verifyResourceRequest(input(token));
    assert.equal(claims.aud, RESOURCE);
    assert.equal(claims.client_id, 'https://app.example/client.json');
    assert.equal(claims.cnf, undefined);
    assert.equal(p, null);
    await rejectsWith(verifyResourceRequest(input(token, { resource: 'https://mcp.shop.example/other' })), 'wrong_site');
    await rejectsWith(verifyResourceRequest(input(token, { resource: 'https://mcp.shop.example/mcp/' })), 'wrong_site');
    await rejectsWith(verifyResourceRequest(input(token, { scheme: 'DPoP' })), 'invalid_token');
  });

  it('a DPoP-bound pass needs the DPoP scheme and a proof by its key, for this request, once', async () => {
    const token = await mint();
    await rejectsWith(verifyResourceRequest(input(token)), 'invalid_token');
    await rejectsWith(verifyResourceRequest(input(token, { scheme: 'DPoP' })), 'invalid_dpop');
    await rejectsWith(verifyResourceRequest(input(token, { scheme: 'DPoP', dpop: await proof(token, other) })), 'dpop_key_mismatch');
    await rejectsWith(verifyResourceRequest(input(token, { scheme: 'DPoP', dpop: await proof(token, client, { htu: 'https://mcp.shop.example/elsewhere' }) })), 'dpop_url_mismatch');
    await rejectsWith(verifyResourceRequest(input(token, { scheme: 'DPoP', dpop: await proof(token, client, { htm: 'GET' }) })), 'dpop_method_mismatch');
    const i = input(token, { scheme: 'DPoP', dpop: await proof(token) });
    const { proof: p } = await verifyResourceRequest(i);
    assert.equal(p?.jkt, client.jkt);
    await rejectsWith(verifyResourceRequest(i), 'dpop_replay');
  });

  it('revocation is asked before the proof is spent', async () => {
    const token = await mint();
    const dpop = await proof(token);
    const i = input(token, { scheme: 'DPoP', dpop, isRevoked: async () => 'grant_revoked' });
    await rejectsWith(verifyResourceRequest(i), 'grant_revoked');
    const ok = await verifyResourceRequest({ ...i, isRevoked: async () => null });
    assert.equal(ok.claims.sub, resourceClaims().sub);
  });

  it('the revocation list refuses a resource pass by its aud (the resource URL) and its agent', async () => {
    const claims = resourceClaims();
    const snapshot = revocationClaims({ revoked_grants: [{ agent: claims.sub, site: RESOURCE, rev_seq: claims.rev_seq }] });
    assert.equal(revocationVerdict(claims, snapshot), 'grant_revoked');
    assert.equal(revocationVerdict(claims, revocationClaims({ revoked_grants: [{ agent: claims.sub, site: 'mcp.shop.example', rev_seq: claims.rev_seq }] })), null);
  });

  it('neither kind of pass passes for the other: agent passes lack client_id, resource passes have a URL aud', async () => {
    await rejectsWith(verifyResourcePass(await mintPass(svc, client, { aud: RESOURCE }), { keys: svc.resolver, issuer: ISSUER, now: NOW, resource: RESOURCE }), 'invalid_token');
    await rejectsWith(verifyPass(await mint(), { keys: svc.resolver, issuer: ISSUER, now: NOW, site: 'mcp.shop.example' }), 'wrong_site');
    await rejectsWith(verifyPass(await mint({}, false), { keys: svc.resolver, issuer: ISSUER, now: NOW, url: CALL_URL }), 'invalid_token');
  });

  it('expired, foreign-issuer and malformed passes are refused; a missing resource is a misconfiguration', async () => {
    await rejectsWith(verifyResourcePass(await mint({ exp: NOW - 1 }), { keys: svc.resolver, issuer: ISSUER, now: NOW, resource: RESOURCE }), 'token_expired');
    await rejectsWith(verifyResourcePass(await mint({ iss: 'https://evil.example' }), { keys: svc.resolver, issuer: ISSUER, now: NOW, resource: RESOURCE }), 'invalid_token');
    await rejectsWith(verifyResourcePass(await mint({ client_id: '' }), { keys: svc.resolver, issuer: ISSUER, now: NOW, resource: RESOURCE }), 'invalid_token');
    for (const bad of [undefined, null, 42, '', 'a.b.c', {}]) {
      await rejectsWith(verifyResourcePass(bad, { keys: svc.resolver, issuer: ISSUER, now: NOW, resource: RESOURCE }), 'invalid_token');
    }
    await rejectsWith(verifyResourcePass(await mint(), { keys: svc.resolver, issuer: ISSUER, now: NOW, resource: '' }), 'invalid_request');
  });
});
