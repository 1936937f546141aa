import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createAgentJwt, createDpopProof, generateAgentKeyPair } from '@mandate/protocol';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config/config.ts';
import { newId } from '../src/domain/ids.ts';
import { openSqliteStore } from '../src/store/sqlite/open.ts';
import { expectStatus, json, remoteAddress, signUp as signUpOwner, testApp } from './helpers/app.ts';
import { agentJwt, createAgent } from './helpers/agents.ts';
import { accessRequest, approve, ownerWithPasskey } from './helpers/approvals.ts';
import { basic, pkce } from './helpers/operators.ts';
import { publishKey } from './helpers/wba.ts';

/** A log written to memory, and the check that none of `secrets` is in it. */
function memoryLog(): { stream: Writable; assertClean(secrets: readonly string[], logged: readonly string[]): void } {
  const lines: string[] = [];
  return {
    stream: new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } }),
    assertClean(secrets, logged) {
      const log = lines.join('');
      assert.ok(lines.length > 10, 'the requests were logged');
      assert.match(log, /"reqId":"[0-9a-f-]{36}"/);
      // The routes under test were logged (so a secret in their logs would have been seen).
      for (const url of logged) assert.ok(log.includes(`"url":"${url}`), `${url} was logged`);
      for (const secret of secrets) assert.equal(log.includes(secret), false, `a secret reached the log: ${secret.slice(0, 12)}...`);
    },
  };
}

describe('logs', () => {
  it('carry request ids and never a password, session token, agent JWT, pass, proof or refresh token', async () => {
    const lines: string[] = [];
    const logStream = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
    const dir = mkdtempSync(join(tmpdir(), 'mandate-logs-'));
    const store = await openSqliteStore(dir);
    const { app } = await buildApp({ config: parseConfig({ DATA_DIR: dir, LOG_LEVEL: 'trace' }), store, logStream });
    const secrets: string[] = [];
    try {
      const password = 'pw-9f8e7d6c5b4a';
      secrets.push(password);
      const signUp = await app.inject({ method: 'POST', url: '/api/users', payload: { email: 'log@example.com', password } });
      const token = (signUp.json() as { session_token: string }).session_token;
      secrets.push(token);
      await app.inject({ method: 'POST', url: '/api/login', payload: { email: 'log@example.com', password: 'wrong-pw-1234567' } });
      secrets.push('wrong-pw-1234567');
      const relogin = await app.inject({ method: 'POST', url: '/api/login', payload: { email: 'log@example.com', password } });
      secrets.push((relogin.json() as { session_token: string }).session_token);
      const auth = { authorization: `Bearer ${token}` };
      const { privateKey, publicJwk } = await generateAgentKeyPair();
      const agentId = (await app.inject({ method: 'POST', url: '/api/agents', headers: auth, payload: { name: 'a', jwk: publicJwk } })).json().id as string;
      const userId = (await app.inject({ url: '/api/me', headers: auth, cookies: { session: token } })).json().id as string;
      await store.grants.create({ id: newId('gr'), userId, agentId, site: 'shop.example', scopes: ['list'], userInfo: [], status: 'active', createdAt: Date.now(), expiresAt: null, usesLeft: null, refreshHash: null, passesIssued: 0, revokedAt: null, revSeq: null, supersededAt: null, resource: null });
      const agentJwt = await createAgentJwt(privateKey, agentId);
      secrets.push(agentJwt);
      const pass = (await app.inject({ method: 'POST', url: '/api/v1/token', payload: { agent_id: agentId, site: 'shop.example', agent_jwt: agentJwt } })).json() as { access_token: string; refresh_token: string };
      secrets.push(pass.access_token, pass.refresh_token);
      const dpop = await createDpopProof(privateKey, publicJwk, { htm: 'GET', htu: 'https://shop.example/x', accessToken: pass.access_token });
      secrets.push(dpop);
      const verified = await app.inject({ method: 'POST', url: '/api/v1/verify', headers: { dpop, authorization: `DPoP ${pass.access_token}` }, payload: { access_token: pass.access_token, dpop, method: 'GET', url: 'https://shop.example/x' } });
      assert.equal(verified.json().valid, true);
      await app.inject({ url: `/api/v1/agent-status?agent_id=${agentId}`, headers: { 'x-agent-jwt': agentJwt } });
      await app.inject({ method: 'POST', url: '/api/logout', headers: auth });
      // Account deletion takes the password too: neither a wrong one nor the right one is logged.
      const other = { authorization: `Bearer ${(relogin.json() as { session_token: string }).session_token}` };
      assert.equal((await app.inject({ method: 'POST', url: '/api/account/delete', headers: other, payload: { confirm: 'log@example.com', password: 'wrong-delete-pw-4242' } })).statusCode, 403);
      secrets.push('wrong-delete-pw-4242');
      assert.equal((await app.inject({ method: 'POST', url: '/api/account/delete', headers: other, payload: { confirm: 'log@example.com', password } })).statusCode, 200);
    } finally {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
    const log = lines.join('');
    assert.ok(lines.length > 10, 'the requests were logged');
    assert.match(log, /"reqId":"[0-9a-f-]{36}"/);
    for (const secret of secrets) assert.equal(log.includes(secret), false, `a secret reached the log: ${secret.slice(0, 12)}...`);
  });

  it('never carry an operator secret sent as HTTP Basic (operator API and token endpoint), nor its code, verifier or a rotated secret', async () => {
    const log = memoryLog();
    const t = await testApp({ env: { LOG_LEVEL: 'trace' }, logStream: log.stream });
    const secrets: string[] = [];
    try {
      // Registered over HTTP (its secret is in that answer), the domain marked verified and switched on in the store.
      const registrant = await signUpOwner(t.app);
      const registered = await t.app.inject({ method: 'POST', url: '/api/operators', headers: registrant.auth, payload: { name: 'Acme agents', redirect_uris: ['https://acme.example/cb'], browser: 'operator' } });
      assert.equal(registered.statusCode, 200, registered.body);
      const created = registered.json() as { id: string; secret: string };
      await t.services.store.operators.markVerified(created.id, t.clock.now());
      await t.services.store.operators.switchStatus(created.id, ['pending'], 'active', t.clock.now());
      const op = { id: created.id, secret: created.secret, redirectUri: 'https://acme.example/cb', auth: basic(created.id, created.secret) };
      const basicValue = (op.auth.authorization ?? '').slice('Basic '.length);
      secrets.push(op.secret, basicValue);
      const owner = await ownerWithPasskey(t);
      const { verifier, challenge } = pkce();
      const started = (await t.app.inject({ method: 'POST', url: '/api/connect/start', headers: owner.auth, payload: { operator: op.id, redirect_uri: op.redirectUri, state: 's', code_challenge: challenge, code_challenge_method: 'S256' } })).json() as { consent_id: string; options: unknown };
      const finished = (await t.app.inject({ method: 'POST', url: '/api/connect/finish', headers: owner.auth, payload: { consent_id: started.consent_id, assertion: owner.authenticator.assert(started.options as never) as Record<string, unknown> } })).json() as { redirect: string };
      const code = new URL(finished.redirect).searchParams.get('code') ?? '';
      assert.ok(code.length > 10);
      secrets.push(code, verifier);
      // The token endpoint with a wrong secret, a malformed header, then the right one.
      const wrong = 'wrong-operator-secret-77aa';
      secrets.push(wrong, Buffer.from(`${op.id}:${wrong}`).toString('base64'));
      assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/operator/token', headers: basic(op.id, wrong), payload: { code, code_verifier: verifier, redirect_uri: op.redirectUri } })).statusCode, 401);
      assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/operator/token', headers: { authorization: `Basic ${op.secret}` }, payload: { code, code_verifier: verifier, redirect_uri: op.redirectUri } })).statusCode, 401);
      const token = await t.app.inject({ method: 'POST', url: '/api/v1/operator/token', headers: op.auth, payload: { code, code_verifier: verifier, redirect_uri: op.redirectUri } });
      assert.equal(token.statusCode, 200, token.body);
      const connectionId = (token.json() as { connection_id: string }).connection_id;
      // The operator API, with the right and a wrong secret.
      const { publicJwk } = await generateAgentKeyPair();
      assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/operator/agents', headers: op.auth, payload: { connection_id: connectionId, name: 'Helper', jwk: publicJwk } })).statusCode, 200);
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/operator/agents', headers: op.auth })).statusCode, 200);
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/operator/connections', headers: op.auth })).statusCode, 200);
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/operator/connections', headers: basic(op.id, wrong) })).statusCode, 401);
      // A new secret, answered once to the person who registered the operator: not logged either.
      const rotated = await t.app.inject({ method: 'POST', url: `/api/operators/${op.id}/secret`, headers: registrant.auth });
      assert.equal(rotated.statusCode, 200, rotated.body);
      const fresh = (rotated.json() as { secret: string }).secret;
      secrets.push(fresh, Buffer.from(`${op.id}:${fresh}`).toString('base64'));
      assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/operator/agents', headers: basic(op.id, fresh) })).statusCode, 200);
      assert.equal((await t.app.inject({ method: 'DELETE', url: `/api/v1/operator/connections/${connectionId}`, headers: basic(op.id, fresh) })).statusCode, 200);
    } finally {
      await t.close();
    }
    log.assertClean(secrets, ['/api/v1/operator/token', '/api/v1/operator/agents', '/api/v1/operator/connections', '/api/operators/']);
  });

  it('never carry the headers of a request pasted into check-agent (API and page), nor the agent JWT of the Web Bot Auth routes', async () => {
    const log = memoryLog();
    const t = await testApp({ env: { LOG_LEVEL: 'trace' }, logStream: log.stream });
    const secrets: string[] = [];
    try {
      const agent = await createAgent(t);
      const reg = await publishKey(t, agent);
      secrets.push(await agentJwt(t, agent));
      const bearer = 'pasted-bearer-token-5c4b3a29';
      const cookie = 'pasted-session-cookie-9d8e7f6a';
      const dpop = 'pasted-dpop-proof-1a2b3c4d5e';
      const agentHeader = 'pasted-x-agent-jwt-6f5e4d3c';
      secrets.push(bearer, cookie, dpop, agentHeader);
      const pasted = (extra: string[]) => ['GET /orders HTTP/1.1', 'Host: shop.example', `Authorization: Bearer ${bearer}`, `Cookie: session=${cookie}`, `DPoP: ${dpop}`, `X-Agent-JWT: ${agentHeader}`, ...extra, '', ''].join('\r\n');
      const requests = [
        pasted([`Signature-Agent: "${reg.signature_agent}"`, 'Signature-Input: sig1=("@authority");created=1;keyid="x";tag="web-bot-auth"', 'Signature: sig1=:AAAA:']),
        pasted([]),
        `not a request at all: Authorization: Bearer ${bearer}`,
        pasted([`X-Pad: ${'x'.repeat(17_000)}`]),
      ];
      for (const request of requests) {
        const api = await t.app.inject({ method: 'POST', url: '/api/v1/check-agent', payload: { request }, remoteAddress: remoteAddress() });
        assert.ok(api.statusCode < 500, `${api.statusCode} ${api.body}`);
        const page = await t.app.inject({ method: 'POST', url: '/tools/check-agent', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ request }).toString(), remoteAddress: remoteAddress() });
        assert.ok(page.statusCode < 500, `${page.statusCode}`);
      }
      // Both fields at once: 400.
      assert.equal((await t.app.inject({ method: 'POST', url: '/api/v1/check-agent', payload: { request: pasted([]), address: 'https://agent.example' }, remoteAddress: remoteAddress() })).statusCode, 400);
    } finally {
      await t.close();
    }
    log.assertClean(secrets, ['/api/v1/check-agent', '/tools/check-agent', '/api/v1/wba/key', '/api/v1/wba/proof']);
  });

  it('never carry the pass a site files a site step-up with, nor the step-up token its poll collects', async () => {
    const log = memoryLog();
    const t = await testApp({ env: { LOG_LEVEL: 'trace' }, logStream: log.stream });
    const secrets: string[] = [];
    let txn = '';
    try {
      const owner = await ownerWithPasskey(t);
      const agent = await createAgent(t, owner);
      expectStatus(await approve(t, owner, await accessRequest(t, agent)), 200);
      const pass = json<{ access_token: string }>(await t.app.inject({ method: 'POST', url: '/api/v1/token', payload: { agent_id: agent.id, site: 'shop.example', agent_jwt: await agent.jwt() } })).access_token;
      secrets.push(pass);
      const filed = await t.app.inject({ method: 'POST', url: '/api/v1/stepup/site', payload: { access_token: pass, action: 'transfer' } });
      expectStatus(filed, 200);
      txn = json<{ txn_id: string }>(filed).txn_id;
      expectStatus(await approve(t, owner, txn), 200);
      const answer = json<{ stepup_token?: string }>(await t.app.inject({ url: `/api/v1/stepup/site/${txn}?wait=1`, headers: { authorization: `Bearer ${pass}` } }));
      assert.ok(answer.stepup_token);
      secrets.push(answer.stepup_token);
      expectStatus(await t.app.inject({ url: `/api/v1/receipts/${txn}`, headers: { authorization: `Bearer ${pass}` } }), 200);
      // Refused passes too: 401 for a broken one, 404 for a pass polling what it may not.
      expectStatus(await t.app.inject({ url: `/api/v1/stepup/site/${txn}`, headers: { authorization: `Bearer ${pass}x` } }), 401);
    } finally {
      await t.close();
    }
    log.assertClean(secrets, ['/api/v1/stepup/site', `/api/v1/stepup/site/${txn}`, `/api/v1/receipts/${txn}`]);
  });
});
