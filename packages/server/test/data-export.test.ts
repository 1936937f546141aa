import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FixedClock } from '../src/clock.ts';
import { sha256Hex } from '../src/crypto/random.ts';
import { newId } from '../src/domain/ids.ts';
import { EXPORT_LIMIT, exportDocument, paged, type ExportContext } from '../src/domain/privacy/export.ts';
import { expectStatus, json, remoteAddress, signUp, testApp, type TestApp } from './helpers/app.ts';
import { createAgent, createGrant } from './helpers/agents.ts';
import { addPasskey, postAccessRequest } from './helpers/approvals.ts';
import { getPass } from './helpers/passes.ts';
import { lastLinkToken, verifyEmail } from './helpers/email-links.ts';

// The data export (issue 23, item 6; decisions §16), in process on both stores: an account seeded
// with every kind of data (passkeys, push devices, agents, grants with refresh tokens, sessions,
// mailed links, OIDC clients and sign-ins, a password, a phone) exports every section as valid JSON
// with none of its secrets or hashes, and nothing of another owner; one export per minute.

const SECTIONS = ['profile', 'notification_settings', 'passkeys', 'devices', 'identity_providers', 'agents', 'grants', 'requests', 'receipts', 'notifications', 'activity', 'oidc_sign_ins', 'oidc_clients', 'plans', 'approval_modes', 'takeover_reports', 'wba_keys', 'connections', 'operators'];

type Seeded = { owner: Awaited<ReturnType<typeof signUp>>; secrets: string[]; agentIds: string[]; grantId: string; receiptTxn: string };

async function seed(t: TestApp, tag: string): Promise<Seeded> {
  const owner = await signUp(t.app, `${tag}.${Date.now()}@example.com`, `${tag} password 123`);
  const secrets: string[] = [owner.password, owner.session_token, sha256Hex(owner.session_token)];
  const store = t.services.store;
  const now = t.clock.now();
  await verifyEmail(t, owner);
  await addPasskey(t, owner);
  const second = json<{ session_token: string }>(await t.app.inject({ method: 'POST', url: '/api/login', remoteAddress: remoteAddress(), payload: { email: owner.email, password: owner.password } })).session_token;
  secrets.push(second, sha256Hex(second));
  const user = await store.users.byId(owner.user.id);
  assert.ok(user);
  secrets.push(user.passwordHash);
  await store.users.update(owner.user.id, { phone: '+33612345678', phoneVerified: true });

  // A pending password-reset link: its token and its hash.
  expectStatus(await t.app.inject({ method: 'POST', url: '/api/password/forgot', remoteAddress: remoteAddress(), payload: { email: owner.email } }), 200);
  await t.services.passwordReset.settled();
  const resetToken = await lastLinkToken(t, owner.user.id, 'password_reset', '/api/password/reset');
  secrets.push(resetToken, sha256Hex(resetToken));

  // Recovery codes, a phone code, a linked identity and an identity-provider flow under way: only hashes
  // and flow secrets, none of which may be exported (the identity itself is the owner's and is).
  const recoveryHash = sha256Hex(`recovery ${tag}`);
  await store.recoveryCodes.replace(owner.user.id, [recoveryHash], now);
  const phoneCodeHash = sha256Hex(`phone code ${tag}`);
  await store.phoneCodes.create({ id: `pc-${tag}-${now}`, userId: owner.user.id, purpose: 'verify_phone', phone: '+33612345678', codeHash: phoneCodeHash, attemptsLeft: 5, createdAt: now, expiresAt: now + 600_000 });
  await store.oauthIdentities.link({ issuer: 'https://idp.example', subject: `sub-${tag}-${now}`, userId: owner.user.id, provider: 'google', createdAt: now });
  const stateHash = sha256Hex(`state ${tag}`);
  const nonce = `nonce-${tag}-value-secret`;
  const codeVerifier = `verifier-${tag}-${'v'.repeat(40)}`;
  await store.oauthStates.create({ stateHash, purpose: 'link', provider: 'google', userId: owner.user.id, txnId: null, limits: null, browserHash: sha256Hex(`browser ${tag}`), nonce, codeVerifier, createdAt: now, expiresAt: now + 600_000 });
  secrets.push(recoveryHash, phoneCodeHash, stateHash, nonce, codeVerifier, sha256Hex(`browser ${tag}`));

  // Push devices: a web-push subscription (its endpoint is a capability, its keys secrets) and an FCM token.
  const p256dh = `BP${tag}${'q'.repeat(60)}`;
  const auth = `auth${tag}Zx9`;
  const endpoint = `https://push.example.net/send/${tag}-endpoint-secret-path`;
  const fcmToken = `fcm-${tag}-registration-token-secret`;
  await store.pushDevices.upsert({ id: newId('dev'), userId: owner.user.id, kind: 'webpush', address: endpoint, p256dh, auth, name: 'Laptop', createdAt: now, lastUsedAt: null });
  await store.pushDevices.upsert({ id: newId('dev'), userId: owner.user.id, kind: 'fcm', address: fcmToken, p256dh: null, auth: null, name: 'Phone', createdAt: now, lastUsedAt: null });
  secrets.push(p256dh, auth, endpoint, fcmToken);

  // Agents, a grant with a refresh token, a pending request.
  const agent = await createAgent(t, owner, 'Shopper');
  const other = await createAgent(t, owner, 'Booker');
  const grant = await createGrant(t, agent);
  const pass = await getPass(t, agent);
  secrets.push(pass.refresh_token, sha256Hex(pass.refresh_token), pass.access_token);
  const refreshHash = (await store.grants.byId(grant.id))?.refreshHash;
  assert.ok(refreshHash);
  secrets.push(refreshHash);

  // An approval mode, a plan whose step carries the digest of a text the agent will type, a take-over report.
  await store.approvalModes.put({ agentId: agent.id, site: 'shop.example', mode: 'smart', hourlyLimit: 20 });
  const textHash = sha256Hex(`text ${tag}`);
  await store.plans.create({
    id: `p_${tag}${now}`, userId: owner.user.id, agentId: agent.id, txnId: `t_${tag}${now}`, title: 'Weekly shop', startAt: now, endAt: now + 3_600_000, status: 'pending', createdAt: now, decidedAt: null,
    steps: [{ id: '1', position: 0, url: 'https://forum.example/t/1', host: 'forum.example', path: '/t/1', button: 'Post reply', category: 'publish', textDigests: [textHash], after: [], uses: 1, usesLeft: 0, approved: false, state: 'waiting', reason: null }],
  });
  secrets.push(textHash);
  await store.takeovers.addReport({ id: `tkr_${tag}${now}`, agentId: agent.id, userId: owner.user.id, site: 'shop.example', kind: 'bot_detection', detail: 'a captcha', url: null, createdAt: now });
  expectStatus(await postAccessRequest(t, other, { site: 'books.example' }), 200);

  // An OIDC client with a secret, and a live sign-in of the agent there.
  const clientId = newId('c');
  const clientSecretHash = sha256Hex(`client secret ${tag}`);
  await store.oidcClients.create({
    id: clientId, userId: owner.user.id, name: `Site ${tag}`, redirectUris: ['https://shop.example/cb'], backchannelLogoutUri: null, isPublic: false,
    secretHash: clientSecretHash, secretSetAt: now, verificationToken: `verif-${tag}-token-value`, verifiedOrigins: [], verifiedAt: null, createdAt: now, updatedAt: now,
  });
  const oidcRefresh = `oidc refresh ${tag}`;
  const sid = `sid-${tag}-${Date.now()}`;
  await store.oidcSignIns.create({
    sid, clientId, userId: owner.user.id, agentId: agent.id, grantId: grant.id, site: 'shop.example', scopes: ['openid'], amr: ['pop'], authTime: Math.floor(now / 1000),
    refreshHash: sha256Hex(oidcRefresh), createdAt: now, expiresAt: now + 86_400_000, endedAt: null, dpopJkt: agent.jkt, resource: null,
  });
  secrets.push(clientSecretHash, sha256Hex(oidcRefresh), sid);

  // An operator the owner registered: its secret's hash and verification token are not exported.
  const operatorSecretHash = sha256Hex(`operator secret ${tag}`);
  await store.operators.create({
    id: newId('op'), userId: owner.user.id, name: `Operator ${tag}`, domain: 'ops.example', redirectUris: ['https://ops.example/cb'], browser: 'operator',
    secretHash: operatorSecretHash, secretSetAt: now, status: 'pending', verificationToken: `op-verif-${tag}-token-value`, verifiedAt: null, statusChangedAt: null, createdAt: now, updatedAt: now,
  });
  secrets.push(operatorSecretHash, `op-verif-${tag}-token-value`);

  // A connection of the owner to that operator, through a consent whose code was exchanged, with the
  // seeded agent made through it: exported with the agent, never the code's hash.
  const connectionId = newId('cn');
  const operatorId = (await store.operators.listForUser(owner.user.id))[0]!.id;
  await store.connections.createOrLive({ id: connectionId, operatorId, userId: owner.user.id, sub: `sub-${tag}`, maxAgents: 5, status: 'active', createdAt: now, endedAt: null });
  const codeHash = sha256Hex(`operator code ${tag}`);
  await store.connections.saveCode({ codeHash, operatorId, userId: owner.user.id, redirectUri: 'https://ops.example/cb', codeChallenge: `challenge-${tag}-value`, expiresAt: now + 60_000, usedAt: null, connectionId: null });
  await store.connections.linkCode(codeHash, connectionId);
  await store.operators.attachAgent(agent.id, { operatorId, connectionId, browser: 'operator' });
  secrets.push(codeHash, `challenge-${tag}-value`);

  // The receipt of an approval (decisions §29): a proof, exported as it is; it holds no secret.
  const receiptTxn = newId('t');
  await store.receipts.record({
    txnId: receiptTxn, userId: owner.user.id, agentId: agent.id, site: 'shop.example', action: 'checkout', detailsDigest: null, nonce: `nonce${tag}receipt`.slice(0, 22), approvedAt: now,
    credentialId: `cred${tag}`, authenticatorData: `authdata${tag}`, clientDataJson: `clientdata${tag}`, signature: `sig${tag}`,
  });
  return { owner, secrets, agentIds: [agent.id, other.id], grantId: grant.id, receiptTxn };
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`data export (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend, env: { OUTBOX_POLL_MS: '600000' }, clock: new FixedClock(Date.now()) });
    });
    after(() => t.close());

    const exportOf = (auth: Record<string, string>) => t.app.inject({ url: '/api/export', headers: auth });

    it('every section, valid JSON, as a download; no secret or hash of any kind; nothing of another owner', async () => {
      const a = await seed(t, 'alice');
      const b = await seed(t, 'bob');
      const res = await exportOf(a.owner.auth);
      expectStatus(res, 200);
      const day = new Date(t.clock.now()).toISOString().slice(0, 10);
      assert.equal(res.headers['content-disposition'], `attachment; filename="mandate-export-${day}.json"`);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['content-length'], undefined, 'streamed: no length known before the end');
      assert.equal(res.headers['transfer-encoding'], 'chunked');
      const doc = JSON.parse(res.body) as Record<string, unknown>;
      assert.equal(doc.format, 'mandate-export');
      assert.deepEqual(doc.sections, SECTIONS);
      for (const name of SECTIONS) assert.ok(name in doc, `section ${name}`);
      for (const name of ['plans', 'approval_modes', 'takeover_reports', 'operators', 'connections']) assert.equal((doc[name] as unknown[]).length, 1, name);
      const connections = doc.connections as { operator: { name: string }; sub: string; max_agents: number; status: string; agents: { id: string }[] }[];
      assert.equal(connections.length, 1, 'the owner\'s connection, not another owner\'s');
      const [connection] = connections;
      assert.equal(connection?.operator.name, 'Operator alice');
      assert.equal(connection?.sub, 'sub-alice');
      assert.deepEqual([connection?.max_agents, connection?.status], [5, 'active']);
      assert.deepEqual(connection?.agents.map((x) => x.id), [a.agentIds[0]], 'the agent made through it');
      assert.equal((doc.operators as { name: string }[])[0]?.name, 'Operator alice', 'the owner\'s own operator, not another owner\'s');

      const profile = doc.profile as Record<string, unknown>;
      assert.equal(profile.email, a.owner.email);
      assert.equal(profile.email_verified, true);
      assert.equal(profile.phone, '+33612345678');
      assert.equal(profile.has_password, true);
      const count = (name: string) => (doc[name] as unknown[]).length;
      assert.equal(count('passkeys'), 1);
      assert.equal(count('devices'), 2);
      assert.equal(count('identity_providers'), 1);
      assert.deepEqual((doc.devices as { push_service: string }[]).map((d) => d.push_service).sort(), ['fcm', 'push.example.net']);
      assert.deepEqual((doc.agents as { id: string }[]).map((x) => x.id).sort(), [...a.agentIds].sort());
      assert.ok((doc.agents as { public_jwk: { kty: string } }[]).every((x) => x.public_jwk.kty === 'EC'), 'agents carry their public keys');
      assert.deepEqual((doc.grants as { id: string }[]).map((g) => g.id), [a.grantId]);
      assert.equal(count('requests'), 1);
      const receipts = doc.receipts as { txn: string; agent_id: string; aud: string; action: string; details_digest: null; user: string; nonce: string; approved_at: string; webauthn: Record<string, string> }[];
      assert.deepEqual(receipts, [{
        txn: a.receiptTxn, agent_id: a.agentIds[0], aud: 'shop.example', action: 'checkout', details_digest: null, user: a.owner.user.id, nonce: 'noncealicereceipt', approved_at: new Date(t.clock.now()).toISOString(),
        webauthn: { credential_id: 'credalice', authenticator_data: 'authdataalice', client_data_json: 'clientdataalice', signature: 'sigalice' },
      }]);
      assert.equal(count('oidc_sign_ins'), 1);
      assert.equal(count('oidc_clients'), 1);
      assert.ok(count('notifications') >= 1, 'the passkey notice');
      const actions = (doc.activity as { action: string }[]).map((r) => r.action);
      assert.ok(actions.includes('email.verified') && actions.includes('password.reset_requested'), actions.join(','));

      for (const secret of a.secrets) assert.equal(res.body.includes(secret), false, `a secret is in the export: ${secret.slice(0, 16)}...`);
      assert.doesNotMatch(res.body, /\$argon2/, 'no password hash');
      assert.doesNotMatch(res.body, /(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])/i, 'no hex SHA-256 of anything');
      assert.doesNotMatch(res.body, /p256dh|"auth"|refresh_hash|secret_hash|token_hash|password_hash/i, 'no secret-bearing field names');

      for (const foreign of [b.owner.user.id, b.owner.email, ...b.agentIds, b.grantId, b.receiptTxn, ...b.secrets]) assert.equal(res.body.includes(foreign), false, `another owner's data: ${foreign.slice(0, 16)}`);
    });

    it('one export per account per minute: 429 with retry_after, another account unaffected', async () => {
      const owner = await signUp(t.app);
      const other = await signUp(t.app);
      expectStatus(await exportOf(owner.auth), 200);
      const refused = await exportOf(owner.auth);
      expectStatus(refused, 429);
      const retry = json<{ retry_after: number }>(refused).retry_after;
      assert.ok(retry > 0 && retry <= EXPORT_LIMIT.windowSec, String(retry));
      assert.equal(refused.headers['content-disposition'], undefined, 'no file started');
      expectStatus(await exportOf(other.auth), 200);
      t.clock.advance(EXPORT_LIMIT.windowSec * 1000);
      expectStatus(await exportOf(owner.auth), 200);
    });

    it('needs a session', async () => {
      expectStatus(await t.app.inject({ url: '/api/export' }), 401);
    });

    it('reads a long activity trail page by page, and exports every record of it', async () => {
      const owner = await signUp(t.app);
      const store = t.services.store;
      for (let i = 0; i < 450; i++) await store.activity.add({ userId: owner.user.id, agentId: null, site: null, action: 'test.filler', detail: { i }, ip: null, createdAt: t.clock.now() });
      const activity = store.activity;
      const list = activity.list.bind(activity);
      const limits: number[] = [];
      activity.list = async (userId, q) => { limits.push(q.limit); return list(userId, q); };
      let res;
      try {
        res = await exportOf(owner.auth);
      } finally {
        activity.list = list;
      }
      expectStatus(res, 200);
      const rows = (JSON.parse(res.body) as { activity: { seq: number; action: string }[] }).activity.filter((r) => r.action === 'test.filler');
      assert.equal(rows.length, 450);
      assert.equal(new Set(rows.map((r) => r.seq)).size, 450);
      assert.ok(limits.length >= 3 && limits.every((l) => l <= 200), `pages: ${limits.join(',')}`);
    });
  });
}

describe('the export document', () => {
  it('is written in chunks, item by item, and parses as one object', async () => {
    const ctx = {} as ExportContext;
    const big = { name: 'big', kind: 'list' as const, read: async function* () { for (let i = 0; i < 2000; i++) yield { i, text: 'x'.repeat(50) }; } };
    const one = { name: 'one', kind: 'value' as const, read: async () => ({ a: 1 }) };
    const none = { name: 'none', kind: 'list' as const, read: async function* () {} };
    const chunks: string[] = [];
    for await (const c of exportDocument([one, big, none], ctx, { format: 'x' })) chunks.push(c);
    assert.ok(chunks.length > 3, `${chunks.length} chunks`);
    assert.ok(chunks.every((c) => c.length < 20_000), 'no giant string');
    const doc = JSON.parse(chunks.join('')) as { format: string; one: unknown; big: unknown[]; none: unknown[] };
    assert.deepEqual([doc.format, doc.one, doc.big.length, doc.none], ['x', { a: 1 }, 2000, []]);
  });

  it('paged stops at a short page', async () => {
    const calls: (number | undefined)[] = [];
    const rows = Array.from({ length: 7 }, (_, i) => i);
    const out: number[] = [];
    for await (const r of paged(async (after: number | undefined) => { calls.push(after); const from = after === undefined ? 0 : after + 1; return rows.slice(from, from + 3); }, (r) => r, 3)) out.push(r);
    assert.deepEqual(out, rows);
    assert.deepEqual(calls, [undefined, 2, 5]);
  });
});
