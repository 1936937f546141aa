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
      await store.grants.create({ id: newId('gr'), userId, agentId, site: 'shop.example', scopes: ['list'], userInfo: [], status: 'active', createdAt: Date.now(), expiresAt: null, usesLeft: null, refreshHash: null, passesIssued: 0, revokedAt: null, revSeq: null, supersededAt: null });
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
});
