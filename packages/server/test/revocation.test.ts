import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { type PassClaims, type RevocationClaims, ProtocolError, revocationVerdict, verifyRevocationSnapshot } from '@mandate/protocol';
import { seconds } from '../src/clock.ts';
import { testApp, signUp, json, type TestApp } from './helpers/app.ts';
import { agentJwt, createAgent, createGrant, revokeGrant } from './helpers/agents.ts';
import { mintPass } from './helpers/passes.ts';

const decodePassForTest = (token: string): PassClaims => decodeJwt(token) as unknown as PassClaims;

interface SnapshotBody {
  signature: string;
  rev_seq: number;
  revoked_agents: { id: string; flag: string; rev_seq: number }[];
  revoked_grants: { agent: string; site: string; rev_seq: number }[];
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`revocation snapshot (${backend})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp({ backend });
    });
    after(() => t.close());

    const jwks = async () => json<{ keys: Record<string, unknown>[] }>(await t.app.inject({ url: '/api/v1/jwks' }));
    const revSeq = () => t.services.store.counters.current('rev_seq');

    /** Fetches the snapshot, checks its signature against the JWKS and that the signed content equals the fields. */
    async function snapshot(): Promise<{ body: SnapshotBody; claims: RevocationClaims; etag: string }> {
      const res = await t.app.inject({ url: '/api/v1/revocation' });
      assert.equal(res.statusCode, 200, res.body);
      const body = json<SnapshotBody>(res);
      const claims = await verifyRevocationSnapshot(body.signature, { keys: await jwks(), issuer: t.config.baseUrl, now: seconds(t.clock.now()) });
      assert.equal(claims.rev_seq, body.rev_seq);
      assert.deepEqual(claims.revoked_agents, body.revoked_agents);
      assert.deepEqual(claims.revoked_grants, body.revoked_grants);
      return { body, claims, etag: String(res.headers.etag) };
    }

    it('answers a signed snapshot that verifies against the published keys, with caching headers', async () => {
      const res = await t.app.inject({ url: '/api/v1/revocation' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['cache-control'], 'public, max-age=30');
      assert.match(String(res.headers.etag), /^"[A-Za-z0-9_-]{43}"$/);
      const { body, claims } = await snapshot();
      assert.equal(body.rev_seq, await revSeq());
      assert.equal(claims.type, 'revocation');
      assert.equal(claims.iss, t.config.baseUrl);
      assert.equal(claims.iat, seconds(t.clock.now()));
      const header = JSON.parse(Buffer.from(body.signature.split('.')[0] ?? '', 'base64url').toString()) as { typ: string; alg: string; kid: string };
      assert.equal(header.typ, 'revocation+jwt');
      assert.equal(header.alg, 'ES256');
    });

    it('a signature from another key or issuer does not verify', async () => {
      const { body } = await snapshot();
      await assert.rejects(verifyRevocationSnapshot(body.signature, { keys: { keys: [] }, issuer: t.config.baseUrl, now: seconds(t.clock.now()) }), ProtocolError);
      await assert.rejects(verifyRevocationSnapshot(body.signature, { keys: await jwks(), issuer: 'https://evil.example', now: seconds(t.clock.now()) }), ProtocolError);
      const [h, p, sig] = body.signature.split('.');
      const claims = JSON.parse(Buffer.from(p ?? '', 'base64url').toString()) as RevocationClaims;
      const tampered = Buffer.from(JSON.stringify({ ...claims, rev_seq: claims.rev_seq + 100 })).toString('base64url');
      await assert.rejects(verifyRevocationSnapshot(`${h}.${tampered}.${sig}`, { keys: await jwks(), issuer: t.config.baseUrl, now: seconds(t.clock.now()) }), ProtocolError);
    });

    it('honours If-None-Match with 304, keeps the ETag while only time passes, and changes it with the content', async () => {
      const first = await t.app.inject({ url: '/api/v1/revocation' });
      const etag = String(first.headers.etag);
      for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const res = await t.app.inject({ url: '/api/v1/revocation', headers: { 'if-none-match': inm } });
        assert.equal(res.statusCode, 304, inm);
        assert.equal(res.body, '');
        assert.equal(res.headers.etag, etag);
        assert.equal(res.headers['cache-control'], 'public, max-age=30');
      }
      const miss = await t.app.inject({ url: '/api/v1/revocation', headers: { 'if-none-match': '"stale"' } });
      assert.equal(miss.statusCode, 200);

      // Within 1 s the same signature is handed out again; later a fresh one (new iat), same ETag.
      t.clock.advance(500);
      const again = await t.app.inject({ url: '/api/v1/revocation' });
      assert.equal(json<SnapshotBody>(again).signature, json<SnapshotBody>(first).signature);
      t.clock.advance(60_000);
      const later = await t.app.inject({ url: '/api/v1/revocation' });
      assert.equal(later.headers.etag, etag);
      assert.notEqual(json<SnapshotBody>(later).signature, json<SnapshotBody>(first).signature);
      const { claims } = await snapshot();
      assert.equal(claims.iat, seconds(t.clock.now()));

      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      await t.app.inject({ method: 'DELETE', url: `/api/agents/${agent.id}`, headers: owner.auth });
      const changed = await t.app.inject({ url: '/api/v1/revocation', headers: { 'if-none-match': etag } });
      assert.equal(changed.statusCode, 200);
      assert.notEqual(changed.headers.etag, etag);
      assert.ok(json<SnapshotBody>(changed).revoked_agents.some((a) => a.id === agent.id));
    });

    it('agent removal advances rev_seq, lists a tombstone and empties its keys', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const before = await snapshot();
      assert.ok(!before.body.revoked_agents.some((a) => a.id === agent.id));
      assert.equal((await t.app.inject({ method: 'DELETE', url: `/api/agents/${agent.id}`, headers: owner.auth })).statusCode, 200);
      const { body } = await snapshot();
      assert.equal(body.rev_seq, before.body.rev_seq + 1);
      assert.deepEqual(body.revoked_agents.find((a) => a.id === agent.id), { id: agent.id, flag: 'revoked', rev_seq: body.rev_seq });

      const status = json<{ global_flag: string }>(await t.app.inject({ url: `/api/v1/agents/${agent.id}/status` }));
      assert.equal(status.global_flag, 'revoked');
      const res = await t.app.inject({ url: `/api/v1/agent-status?agent_id=${agent.id}`, headers: { 'x-agent-jwt': await agentJwt(t, agent) } });
      assert.equal(res.statusCode, 403);
      assert.match(json<{ detail: string }>(res).detail, /revoked/);
    });

    it('flag revoked lists the agent; flag ok unblocks it and it leaves the list after 720 s; each advances rev_seq', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const flag = (f: string) => t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: f } });
      const s0 = (await snapshot()).body.rev_seq;

      assert.equal((await flag('revoked')).statusCode, 200);
      const s1 = (await snapshot()).body;
      assert.equal(s1.rev_seq, s0 + 1);
      assert.deepEqual(s1.revoked_agents.find((a) => a.id === agent.id), { id: agent.id, flag: 'revoked', rev_seq: s0 + 1 });
      assert.equal((await t.app.inject({ url: `/api/v1/agent-status?agent_id=${agent.id}`, headers: { 'x-agent-jwt': await agentJwt(t, agent) } })).statusCode, 403);

      assert.equal((await flag('ok')).statusCode, 200);
      const s2 = (await snapshot()).body;
      assert.equal(s2.rev_seq, s0 + 2);
      // The lifted block stays listed for 600 s + 120 s (revocation-window.test.ts), then leaves.
      assert.deepEqual(s2.revoked_agents.find((a) => a.id === agent.id), { id: agent.id, flag: 'revoked', rev_seq: s0 + 1 });
      t.clock.advance(720_000);
      assert.ok(!(await snapshot()).body.revoked_agents.some((a) => a.id === agent.id));
      assert.equal((await t.app.inject({ url: `/api/v1/agent-status?agent_id=${agent.id}`, headers: { 'x-agent-jwt': await agentJwt(t, agent) } })).statusCode, 200);

      assert.equal((await flag('suspicious')).statusCode, 200);
      const s3 = (await snapshot()).body;
      assert.equal(s3.rev_seq, s0 + 3);
      assert.deepEqual(s3.revoked_agents.find((a) => a.id === agent.id), { id: agent.id, flag: 'suspicious', rev_seq: s0 + 3 });
    });

    it('a revoked grant is listed with its rev_seq and named in the agent status', async () => {
      const owner = await signUp(t.app);
      const agent = await createAgent(t, owner);
      const grant = await createGrant(t, agent, { site: 'shop.example' });
      await createGrant(t, agent, { site: 'other.example' });
      const s0 = (await snapshot()).body.rev_seq;
      const passBefore = await mintPass(t, agent, 'shop.example');
      const revSeqOfRevocation = await revokeGrant(t, grant.id);
      assert.equal(revSeqOfRevocation, s0 + 1);
      const { body, claims } = await snapshot();
      assert.equal(body.rev_seq, s0 + 1);
      assert.deepEqual(body.revoked_grants.filter((g) => g.agent === agent.id), [{ agent: agent.id, site: 'shop.example', rev_seq: s0 + 1 }]);
      assert.ok(!body.revoked_agents.some((a) => a.id === agent.id));

      // A local verifier refuses passes minted up to the revocation, and not one minted after a
      // re-approval (which advances rev_seq past the entry).
      assert.equal(revocationVerdict(decodePassForTest(passBefore), claims), 'grant_revoked');
      assert.equal(revocationVerdict(decodePassForTest(await mintPass(t, agent, 'shop.example')), claims), 'grant_revoked');
      const passAfter = decodePassForTest(await mintPass(t, agent, 'shop.example', { rev_seq: s0 + 2 }));
      assert.equal(revocationVerdict(passAfter, claims), null);
      const otherSite: PassClaims = { ...decodePassForTest(passBefore), aud: 'other.example' };
      assert.equal(revocationVerdict(otherSite, claims), null);

      const status = json<{ revoked_sites: string[]; global_flag: string }>(await t.app.inject({ url: `/api/v1/agents/${agent.id}/status` }));
      assert.deepEqual(status.revoked_sites, ['shop.example']);
      assert.equal(status.global_flag, 'ok');
    });

    it('rev_seq never goes down', async () => {
      const owner = await signUp(t.app);
      const seen: number[] = [(await snapshot()).body.rev_seq];
      for (let i = 0; i < 3; i++) {
        const agent = await createAgent(t, owner);
        await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: 'revoked' } });
        seen.push((await snapshot()).body.rev_seq);
        await t.app.inject({ method: 'POST', url: `/api/agents/${agent.id}/flag`, headers: owner.auth, payload: { flag: 'ok' } });
        seen.push((await snapshot()).body.rev_seq);
      }
      for (let i = 1; i < seen.length; i++) assert.ok((seen[i] ?? 0) > (seen[i - 1] ?? 0), seen.join(','));
    });
  });
}
