import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { generateAgentKeyPair } from '@mandate/protocol';
import { MandateAgent } from '@mandate/agent';
import { decodeJwt, exportJWK } from 'jose';
import { followAuthorize } from '../../../../examples/oidc-agent/follow-authorize.ts';
import { QUOTAS } from '../../src/domain/quotas.ts';
import { HttpOwner, call, expectStatus, remoteDecide } from '../helpers/over-http.ts';
import { freePort, startServer, type ServerProcess } from '../helpers/server-process.ts';
import { sleep, until } from '../helpers/until.ts';

// Issue 22, item 3, against the real server as its own process: CIBA reached another owner's agent
// through a site's host alone. A real site (its own account, its client verified through
// /.well-known/service-site.txt) has an agent signed in. An unrelated account registers an
// unverified client on the same host under the real site's name and, knowing the agent's act.sub
// (pairwise per host, so the same value at both clients), uses /oidc/bc-authorize to
// 1. put a card in front of the owner under the real site's name,
// 2. get the real pairwise sub / act.sub once the (deceived) owner approves,
// 3. file about one push a second (requested_expiry=1) past every quota,
// 4. keep going after the owner revoked the site's grant.
// Each is refused now. The real site's own CIBA keeps working, within its quotas.
// Run against the code before the fix (84fd4e7, src restored and rebuilt), the control passed and
// each of 1-4 failed: 1. the owner was shown a card {client_name: "Real Shop", verified: false,
// binding_message: "Real Shop: confirm your order"}; 2. once approved the attacker got the real
// `sub` and `act.sub` (equal to the real site's); 3. "the attacker filed 4 requests at one a
// second"; 4. after the revocation its bc-authorize still answered 200 with an auth_req_id.

type OAuthBody = { error?: string; error_description?: string; quota?: string; retry_after?: number; auth_req_id?: string; expires_in?: number; id_token?: string };
type Card = { id: string; agent_id: string; sign_in?: { client_id: string; client_name: string; verified: boolean; flow: string; binding_message: string | null } };
interface Client { id: string; secret: string; redirectUri: string }

describe('CIBA from another account\'s client on the real site\'s host (issue 22, real processes)', () => {
  let server: ServerProcess;
  let site: Server;
  let siteOrigin = '';
  let siteFile = '';
  let owner: HttpOwner;
  let agentId = '';
  let agent: MandateAgent;
  let real: Client;
  let evil: Client;
  let realSub = '';
  let realActSub = '';

  const basic = (c: Client) => `Basic ${Buffer.from(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret)}`).toString('base64')}`;
  const form = async (path: string, c: Client, body: Record<string, string>) => {
    const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(c) }, body: new URLSearchParams(body).toString() });
    return { status: res.status, body: (await res.json()) as OAuthBody, headers: res.headers };
  };
  const bcAuthorize = (c: Client, body: Record<string, string>) => form('/oidc/bc-authorize', c, { scope: 'openid profile', ...body });
  const pollCiba = (c: Client, authReqId: string) => form('/oidc/token', c, { grant_type: 'urn:openid:params:grant-type:ciba', auth_req_id: authReqId });
  const cards = async () => (await owner.ok<{ pending: Card[] }>('GET', '/api/me')).pending;
  const inbox = async () => (await owner.ok<{ items: Array<{ body: string; txn_id?: string }> }>('GET', '/api/notifications')).items;
  const cardOf = (c: Client) => until(`the owner's card from ${c.id}`, async () => (await cards()).find((p) => p.sign_in?.client_id === c.id), { ms: 10_000 });

  const register = async (account: HttpOwner, path: string): Promise<Client> => {
    const redirectUri = `${siteOrigin}${path}`;
    const c = await account.ok<{ client_id: string; client_secret: string; verification: { line: string } }>('POST', '/api/oidc/clients', { name: 'Real Shop', redirect_uris: [redirectUri] });
    if (path === '/cb') siteFile = `${c.verification.line}\n`;
    return { id: c.client_id, secret: c.client_secret, redirectUri };
  };

  /** The agent signs in at `c` through /oidc/authorize (the owner approves the first time); the ID token's claims. */
  const signIn = async (c: Client) => {
    const verifier = randomBytes(32).toString('base64url');
    const q = new URLSearchParams({ response_type: 'code', client_id: c.id, redirect_uri: c.redirectUri, scope: 'openid profile', code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' });
    const approving = until('the sign-in card', async () => (await cards()).find((p) => p.agent_id === agentId && p.sign_in?.flow === 'authorize'), { ms: 15_000 }).then((card) => owner.approve(card.id));
    const back = new URL(await followAuthorize(agent, `${server.baseUrl}/oidc/authorize?${q}`, 100));
    await approving;
    const tokens = await form('/oidc/token', c, { grant_type: 'authorization_code', code: back.searchParams.get('code') ?? '', redirect_uri: c.redirectUri, code_verifier: verifier });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    return decodeJwt(tokens.body.id_token ?? '') as { sub: string; act: { sub: string } };
  };

  before(async () => {
    server = await startServer({ name: 'mandate', env: { OUTBOUND_ALLOW_LOOPBACK: 'true', OUTBOX_POLL_MS: '200' } });
    // The real site: serves its verification file on its host.
    const sitePort = await freePort();
    siteOrigin = `http://127.0.0.1:${sitePort}`;
    site = createServer((req, res) => {
      if (req.url === '/.well-known/service-site.txt') res.writeHead(200, { 'content-type': 'text/plain' }).end(siteFile);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => site.listen(sitePort, '127.0.0.1', r));

    owner = await HttpOwner.signUp(server, server.baseUrl, { label: 'owner' });
    const { privateKey, publicJwk } = await generateAgentKeyPair();
    agentId = await owner.createAgent('Shopper', publicJwk);
    agent = new MandateAgent({ serviceUrl: server.baseUrl, agentId, privateKey: await exportJWK(privateKey) });

    const siteAccount = await HttpOwner.signUp(server, server.baseUrl, { label: 'real-site' });
    real = await register(siteAccount, '/cb');
    const verified = await siteAccount.ok<{ verified: boolean }>('POST', `/api/oidc/clients/${real.id}/verify`);
    assert.equal(verified.verified, true, 'the real site proved it runs the host');
    const attacker = await HttpOwner.signUp(server, server.baseUrl, { label: 'attacker' });
    evil = await register(attacker, '/attacker-cb');
    assert.equal(new URL(evil.redirectUri).host, new URL(real.redirectUri).host, 'the same host');

    const claims = await signIn(real);
    realSub = claims.sub;
    realActSub = claims.act.sub;
  });

  after(async () => {
    await server?.stop();
    await new Promise((r) => site?.close(r));
  });

  it('control: the real site\'s own CIBA reaches the owner as the verified Real Shop, and gets the agent it named', async () => {
    const asked = await bcAuthorize(real, { login_hint: realActSub, binding_message: 'Order 42: 12 €' });
    assert.equal(asked.status, 200, JSON.stringify(asked.body));
    const card = await cardOf(real);
    assert.deepEqual(card.sign_in, { client_id: real.id, client_name: 'Real Shop', verified: true, flow: 'ciba', binding_message: 'Order 42: 12 €' });
    await owner.approve(card.id);
    const tokens = await pollCiba(real, asked.body.auth_req_id ?? '');
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.equal((decodeJwt(tokens.body.id_token ?? '').act as { sub: string }).sub, realActSub);
  });

  it('1. the attacker\'s client cannot put a card in front of the owner under the real site\'s name', async () => {
    const before = (await inbox()).length;
    const asked = await bcAuthorize(evil, { login_hint: realActSub, binding_message: 'Real Shop: confirm your order', requested_expiry: '1' });
    const shown = (await cards()).find((p) => p.sign_in?.client_id === evil.id);
    await sleep(1_500); // the outbox sends every 200 ms: a push would be there by now (and a 1 s card gone)
    const pushed = (await inbox()).slice(0, (await inbox()).length - before);
    assert.equal(shown, undefined, `the owner was shown a card: ${JSON.stringify(shown?.sign_in)}`);
    assert.deepEqual(pushed, [], 'no notification');
    assert.deepEqual([asked.status, asked.body.error], [400, 'unknown_user_id'], `the attacker's request was accepted: ${JSON.stringify(asked.body)}`);
  });

  it('2. the attacker never gets the real pairwise sub or act.sub, even if the owner would approve', async () => {
    const asked = await bcAuthorize(evil, { login_hint: realActSub });
    let got: { sub: string; actSub: string } | undefined;
    if (asked.status === 200) {
      // The code before the fix: the owner, seeing "Real Shop", approves.
      const card = await cardOf(evil);
      await remoteDecide(server, owner, card.id, true);
      const tokens = await pollCiba(evil, asked.body.auth_req_id ?? '');
      if (tokens.body.id_token) {
        const claims = decodeJwt(tokens.body.id_token);
        got = { sub: String(claims.sub), actSub: (claims.act as { sub: string }).sub };
      }
    }
    assert.equal(got, undefined, `the attacker got the real identifiers: ${JSON.stringify(got)} (real sub ${realSub}, act.sub ${realActSub})`);
    assert.deepEqual([asked.status, asked.body.error], [400, 'unknown_user_id'], JSON.stringify(asked.body));
  });

  it('3. no push a second: the attacker is refused every time, requested_expiry=1 is raised to 60 s, and the agent\'s requests from one client stop at the hourly quota', async () => {
    const before = (await inbox()).length;
    let attackerAccepted = 0;
    for (let i = 0; i < 4; i++) {
      if ((await bcAuthorize(evil, { login_hint: realActSub, requested_expiry: '1' })).status === 200) attackerAccepted++;
      await sleep(1_100);
    }
    assert.equal(attackerAccepted, 0, `the attacker filed ${attackerAccepted} requests at one a second`);

    // The real site itself cannot do it either.
    const first = await bcAuthorize(real, { login_hint: realActSub, requested_expiry: '1' });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.expires_in, 60, 'requested_expiry=1 is raised to 60 s');
    await sleep(1_100);
    const refiled = await bcAuthorize(real, { login_hint: realActSub, requested_expiry: '1' });
    assert.deepEqual([refiled.status, refiled.body.error], [400, 'invalid_request'], 'the first card still waits: no new one a second later');

    // The owner denies each card at once; the site asks again at once: the hourly quota ends it.
    let accepted = 2; // the control's request and `first`, from this client for this agent this hour
    let last = refiled;
    for (let i = 0; i < 15; i++) {
      const card = (await cards()).find((p) => p.sign_in?.client_id === real.id);
      if (card) await remoteDecide(server, owner, card.id, false);
      last = await bcAuthorize(real, { login_hint: realActSub, requested_expiry: '1' });
      if (last.status !== 200) break;
      accepted++;
    }
    assert.deepEqual([last.status, last.body.error, last.body.quota], [429, 'rate_limited', 'ciba_requests_per_hour'], JSON.stringify(last.body));
    assert.ok(Number(last.headers.get('retry-after')) > 0, 'Retry-After');
    assert.ok(accepted <= QUOTAS.cibaRequestsPerAgentPerClientPerHour, `${accepted} requests accepted in the hour`);
    await sleep(1_000);
    assert.ok((await inbox()).length - before <= QUOTAS.cibaRequestsPerAgentPerClientPerHour, 'pushes stay within the quota');
  });

  it('4. after the owner revokes the site\'s grant, neither client reaches the owner with that act.sub', async () => {
    const grant = (await owner.grants()).find((g) => g.agent_id === agentId && g.site === new URL(real.redirectUri).host);
    assert.ok(grant, 'the sign-in left a grant at the site');
    expectStatus(await call(server, 'POST', `/api/grants/${grant.id}/revoke`, undefined, owner.auth), 200, 'revoke');
    const before = (await inbox()).length;
    const attacker = await bcAuthorize(evil, { login_hint: realActSub });
    assert.deepEqual([attacker.status, attacker.body.error], [400, 'unknown_user_id'], `the attacker went on after the revocation: ${JSON.stringify(attacker.body)}`);
    const site = await bcAuthorize(real, { login_hint: realActSub });
    assert.deepEqual([site.status, site.body.error], [400, 'unknown_user_id'], `the real site went on after the revocation: ${JSON.stringify(site.body)}`);
    await sleep(1_000);
    assert.equal((await cards()).length, 0, 'no card');
    assert.equal((await inbox()).length, before, 'no notification');
  });
});
