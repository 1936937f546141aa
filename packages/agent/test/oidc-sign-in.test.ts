import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { MandateAgent } from '../src/agent.ts';
import { InvalidInputError } from '../src/client/errors.ts';
import { AgentKey } from '../src/keys/agent-key.ts';
import { OIDC_AGENT_HEADER_LIFETIME_SEC, oidcAuthorizeHeaders } from '../src/oidc-sign-in.ts';

// The agent's header for Mandate's /oidc/authorize (decisions §12): what the service checks in
// domain/oidc/agent-header.ts, checked here on the token itself. The server's e2e test
// (test/e2e/authjs.e2e.test.ts) sends it to the real service.

const AGENT_ID = 'ag_abcdefghijklmnopqrstuvwxyz';
// As a relying party builds it: the query as URLSearchParams writes it (`+` for spaces), a port.
const AUTHORIZE = 'http://127.0.0.1:8080/oidc/authorize?response_type=code&client_id=c_shop&redirect_uri=http%3A%2F%2F127.0.0.1%3A3000%2Fauth%2Fcallback%2Fmandate&scope=openid+profile&code_challenge=abc&code_challenge_method=S256';

describe('oidcAuthorizeHeaders', () => {
  it('signs an agent JWT with htu = the URL exactly, a fresh jti and 60 s of life', async () => {
    const key = await AgentKey.generate();
    const headers = await oidcAuthorizeHeaders(key.privateKey, AGENT_ID, AUTHORIZE);
    assert.deepEqual(Object.keys(headers), ['X-Service-Agent']);
    const jwt = headers['X-Service-Agent'];
    assert.deepEqual(decodeProtectedHeader(jwt), { alg: 'ES256', typ: 'JWT' });
    const { payload } = await jwtVerify(jwt, createPublicKey({ key: key.publicJwk, format: 'jwk' }), { algorithms: ['ES256'], issuer: AGENT_ID, subject: AGENT_ID });
    assert.equal(payload.type, 'agent');
    assert.equal(payload.htu, AUTHORIZE);
    assert.equal((payload.exp ?? 0) - (payload.iat ?? 0), OIDC_AGENT_HEADER_LIFETIME_SEC);
    assert.equal(OIDC_AGENT_HEADER_LIFETIME_SEC, 60);
    assert.ok(Math.abs((payload.iat ?? 0) - Date.now() / 1000) < 5, 'signed now');
    assert.match(String(payload.jti), /^[A-Za-z0-9_-]{22}$/);
  });

  it('gives every header its own jti', async () => {
    const key = await AgentKey.generate();
    const jtis = new Set<unknown>();
    for (let i = 0; i < 20; i++) {
      const { payload } = await jwtVerify((await oidcAuthorizeHeaders(key.privateKey, AGENT_ID, AUTHORIZE))['X-Service-Agent'], createPublicKey({ key: key.publicJwk, format: 'jwk' }));
      jtis.add(payload.jti);
    }
    assert.equal(jtis.size, 20);
  });

  it('takes a URL object as its href, and refuses what is not an http(s) URL', async () => {
    const key = await AgentKey.generate();
    const url = new URL(AUTHORIZE);
    const { payload } = await jwtVerify((await oidcAuthorizeHeaders(key.privateKey, AGENT_ID, url))['X-Service-Agent'], createPublicKey({ key: key.publicJwk, format: 'jwk' }));
    assert.equal(payload.htu, url.href);
    await assert.rejects(oidcAuthorizeHeaders(key.privateKey, AGENT_ID, '/oidc/authorize?client_id=c'), InvalidInputError);
    await assert.rejects(oidcAuthorizeHeaders(key.privateKey, AGENT_ID, 'ftp://mandate.example/oidc/authorize'), InvalidInputError);
  });
});

describe('MandateAgent.signInHeaders', () => {
  it('signs with the agent\'s key and id', async () => {
    const key = await AgentKey.generate();
    const agent = new MandateAgent({ serviceUrl: 'http://127.0.0.1:8080', agentId: AGENT_ID, privateKey: key });
    const jwt = (await agent.signInHeaders(AUTHORIZE))['X-Service-Agent'];
    const { payload } = await jwtVerify(jwt, createPublicKey({ key: key.publicJwk, format: 'jwk' }), { algorithms: ['ES256'], issuer: AGENT_ID, subject: AGENT_ID });
    assert.equal(payload.htu, AUTHORIZE);
    assert.equal(payload.type, 'agent');
  });
});
