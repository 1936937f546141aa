import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FixedClock } from '../../server/src/clock.ts';
import { createAgent } from '../../server/test/helpers/agents.ts';
import { createVerifier, type MandateRequest, type RouteRequirements, type Verifier, type VerifyResult } from '../src/index.ts';
import {
  type AgentWithPass,
  type Mandate,
  PUBLIC_BASE,
  SITE,
  agentRequest,
  agentWithPass,
  ownerCall,
  quiet,
  startMandate,
  stepupFor,
} from './helpers/mandate.ts';

// THE parity table: every case runs against cloud mode (POST /api/v1/verify) and local mode (keys,
// revocation list and replay cache here; step-ups confirmed at Mandate), each with its own fresh
// agents and proofs, and both must give the same answer as the table says.

type Expected = { ok: true; stepup?: boolean } | { status: number; error: string };

type Ctx = {
  m: Mandate;
  mode: 'cloud' | 'local';
  agent(o?: Parameters<typeof agentWithPass>[1]): Promise<AgentWithPass>;
  /** Verifies with this mode's verifier; local mode first polls, as it would within rev_ttl. */
  verify(req: MandateRequest, route?: RouteRequirements): Promise<VerifyResult>;
};

type Case = { name: string; expect: Expected; run(c: Ctx): Promise<VerifyResult> };

const CHECKOUT: RouteRequirements = { scope: 'checkout', action: 'buy 1 x Desk lamp for 19.90 EUR' };
const ACTION = CHECKOUT.action ?? '';

function tamper(jwt: string): string {
  const [h, p, s] = jwt.split('.');
  const claims = JSON.parse(Buffer.from(p ?? '', 'base64url').toString()) as Record<string, unknown>;
  claims['scope'] = ['list', 'orders:read', 'checkout', 'admin'];
  return `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
}

const CASES: Case[] = [
  { name: 'valid pass and proof', expect: { ok: true, stepup: false }, run: async (c) => c.verify(await agentRequest(c.m, await c.agent())) },
  {
    name: 'valid, with the route scope',
    expect: { ok: true, stepup: false },
    run: async (c) => c.verify(await agentRequest(c.m, await c.agent({ scopes: ['orders:read'] })), { scope: 'orders:read' }),
  },
  {
    name: 'pass lacks the route scope',
    expect: { status: 403, error: 'insufficient_scope' },
    run: async (c) => c.verify(await agentRequest(c.m, await c.agent({ scopes: ['list'] })), { scope: 'orders:read' }),
  },
  { name: 'pass for another site', expect: { status: 401, error: 'wrong_site' }, run: async (c) => c.verify(await agentRequest(c.m, await c.agent({ site: 'other.example' }))) },
  {
    name: 'proof for another method',
    expect: { status: 401, error: 'dpop_method_mismatch' },
    run: async (c) => c.verify(await agentRequest(c.m, await c.agent(), { proof: { method: 'POST' } })),
  },
  {
    name: 'proof for another URL',
    expect: { status: 401, error: 'dpop_url_mismatch' },
    run: async (c) => c.verify(await agentRequest(c.m, await c.agent(), { proof: { htu: `${PUBLIC_BASE}/products` } })),
  },
  {
    name: 'proof for the internal address instead of the public one',
    expect: { status: 401, error: 'dpop_url_mismatch' },
    run: async (c) => c.verify(await agentRequest(c.m, await c.agent(), { base: 'http://internal:8080' })),
  },
  {
    name: 'replayed proof (same jti)',
    expect: { status: 401, error: 'dpop_replay' },
    run: async (c) => {
      const req = await agentRequest(c.m, await c.agent());
      assert.equal((await c.verify(req)).ok, true);
      return c.verify(req);
    },
  },
  {
    name: 'stale proof (iat 200 s ago)',
    expect: { status: 401, error: 'dpop_stale' },
    run: async (c) => c.verify(await agentRequest(c.m, await c.agent(), { proof: { iat: Math.floor(c.m.clock.now() / 1000) - 200 } })),
  },
  {
    name: 'expired pass',
    expect: { status: 401, error: 'token_expired' },
    run: async (c) => {
      const a = await c.agent();
      c.m.clock.advance(601_000);
      return c.verify(await agentRequest(c.m, a));
    },
  },
  {
    name: 'tampered pass',
    expect: { status: 401, error: 'invalid_token' },
    run: async (c) => {
      const a = await c.agent();
      const forged = tamper(a.pass);
      return c.verify(await agentRequest(c.m, a, { pass: forged, proof: { accessToken: forged } }));
    },
  },
  {
    name: 'a step-up token sent as the pass',
    expect: { status: 401, error: 'invalid_token' },
    run: async (c) => {
      const a = await c.agent();
      const token = await stepupFor(c.m, a, ACTION);
      return c.verify(await agentRequest(c.m, a, { pass: token, proof: { accessToken: token } }));
    },
  },
  {
    name: 'proof signed by another key',
    expect: { status: 401, error: 'dpop_key_mismatch' },
    run: async (c) => {
      const a = await c.agent();
      const other = await createAgent(c.m);
      return c.verify(await agentRequest(c.m, a, { proof: { signer: other } }));
    },
  },
  {
    name: 'proof made for another pass (ath)',
    expect: { status: 401, error: 'invalid_dpop' },
    run: async (c) => {
      const a = await c.agent();
      const b = await c.agent();
      return c.verify(await agentRequest(c.m, a, { proof: { accessToken: b.pass } }));
    },
  },
  { name: 'missing DPoP header', expect: { status: 401, error: 'invalid_dpop' }, run: async (c) => c.verify(await agentRequest(c.m, await c.agent(), { dpop: null })) },
  {
    name: 'missing Authorization header',
    expect: { status: 401, error: 'invalid_request' },
    run: async (c) => {
      const req = await agentRequest(c.m, await c.agent());
      const { authorization: _dropped, ...headers } = req.headers as Record<string, string>;
      return c.verify({ ...req, headers });
    },
  },
  {
    name: 'revoked grant',
    expect: { status: 401, error: 'grant_revoked' },
    run: async (c) => {
      const a = await c.agent();
      await ownerCall(c.m, a, 'POST', `/api/grants/${a.grant.id}/revoke`);
      return c.verify(await agentRequest(c.m, a));
    },
  },
  {
    name: 'agent blocked by its owner',
    expect: { status: 401, error: 'agent_revoked' },
    run: async (c) => {
      const a = await c.agent();
      await ownerCall(c.m, a, 'POST', `/api/agents/${a.agent.id}/flag`, { flag: 'revoked' });
      return c.verify(await agentRequest(c.m, a));
    },
  },
  {
    name: 'agent removed by its owner',
    expect: { status: 401, error: 'agent_revoked' },
    run: async (c) => {
      const a = await c.agent();
      await ownerCall(c.m, a, 'DELETE', `/api/agents/${a.agent.id}`);
      return c.verify(await agentRequest(c.m, a));
    },
  },
  {
    name: 'step-up valid',
    expect: { ok: true, stepup: true },
    run: async (c) => {
      const a = await c.agent();
      return c.verify(await agentRequest(c.m, a, { method: 'POST', path: '/checkout', stepup: await stepupFor(c.m, a, ACTION) }), CHECKOUT);
    },
  },
  {
    name: 'step-up reused',
    expect: { status: 401, error: 'stepup_used_or_expired' },
    run: async (c) => {
      const a = await c.agent();
      const stepup = await stepupFor(c.m, a, ACTION);
      assert.equal((await c.verify(await agentRequest(c.m, a, { method: 'POST', path: '/checkout', stepup }), CHECKOUT)).ok, true);
      return c.verify(await agentRequest(c.m, a, { method: 'POST', path: '/checkout', stepup }), CHECKOUT);
    },
  },
  {
    name: 'step-up for another action',
    expect: { status: 401, error: 'stepup_wrong_action' },
    run: async (c) => {
      const a = await c.agent();
      const stepup = await stepupFor(c.m, a, 'buy 9 x Desk lamp for 179.10 EUR');
      return c.verify(await agentRequest(c.m, a, { method: 'POST', path: '/checkout', stepup }), CHECKOUT);
    },
  },
  {
    name: 'step-up missing',
    expect: { status: 403, error: 'stepup_required' },
    run: async (c) => c.verify(await agentRequest(c.m, await c.agent(), { method: 'POST', path: '/checkout' }), CHECKOUT),
  },
  {
    // The owner unticked `checkout` when approving: asking them for a step-up could only end in a 403.
    name: 'step-up missing, pass lacking the scope: insufficient_scope, not stepup_required',
    expect: { status: 403, error: 'insufficient_scope' },
    run: async (c) => c.verify(await agentRequest(c.m, await c.agent({ scopes: ['list'] }), { method: 'POST', path: '/checkout' }), CHECKOUT),
  },
  {
    name: 'step-up missing, revoked grant: grant_revoked, not stepup_required',
    expect: { status: 401, error: 'grant_revoked' },
    run: async (c) => {
      const a = await c.agent();
      await ownerCall(c.m, a, 'POST', `/api/grants/${a.grant.id}/revoke`);
      return c.verify(await agentRequest(c.m, a, { method: 'POST', path: '/checkout' }), CHECKOUT);
    },
  },
  {
    name: 'step-up expired',
    expect: { status: 401, error: 'stepup_used_or_expired' },
    run: async (c) => {
      const a = await c.agent();
      const iat = Math.floor(c.m.clock.now() / 1000) - 61;
      const stepup = await stepupFor(c.m, a, ACTION, { iat, exp: iat + 60 });
      return c.verify(await agentRequest(c.m, a, { method: 'POST', path: '/checkout', stepup }), CHECKOUT);
    },
  },
  {
    name: "step-up of another agent",
    expect: { status: 401, error: 'stepup_invalid' },
    run: async (c) => {
      const a = await c.agent();
      const b = await c.agent();
      return c.verify(await agentRequest(c.m, a, { method: 'POST', path: '/checkout', stepup: await stepupFor(c.m, b, ACTION) }), CHECKOUT);
    },
  },
  {
    name: 'step-up approved by another person',
    expect: { status: 401, error: 'stepup_invalid' },
    run: async (c) => {
      const a = await c.agent();
      const stepup = await stepupFor(c.m, a, ACTION, { user: 'u_someoneelse000000000000' });
      return c.verify(await agentRequest(c.m, a, { method: 'POST', path: '/checkout', stepup }), CHECKOUT);
    },
  },
  {
    name: 'step-up for another site',
    expect: { status: 401, error: 'stepup_wrong_site' },
    run: async (c) => {
      const a = await c.agent();
      const stepup = await stepupFor(c.m, a, ACTION, { aud: 'other.example' });
      return c.verify(await agentRequest(c.m, a, { method: 'POST', path: '/checkout', stepup }), CHECKOUT);
    },
  },
  {
    name: 'step-up that is not a step-up token (a pass)',
    expect: { status: 401, error: 'stepup_invalid' },
    run: async (c) => {
      const a = await c.agent();
      return c.verify(await agentRequest(c.m, a, { method: 'POST', path: '/checkout', stepup: a.pass }), CHECKOUT);
    },
  },
  {
    name: 'step-up with a pass lacking the scope: refused, and the step-up is not used up',
    expect: { status: 403, error: 'insufficient_scope' },
    run: async (c) => {
      const a = await c.agent({ scopes: ['list'] });
      const stepup = await stepupFor(c.m, a, ACTION);
      const result = await c.verify(await agentRequest(c.m, a, { method: 'POST', path: '/checkout', stepup }), CHECKOUT);
      const res = await c.m.app.inject({ method: 'POST', url: '/api/v1/stepup/verify', payload: { stepup_token: stepup, site: SITE, action: ACTION } });
      assert.equal(res.json().valid, true, `the step-up must still be usable: ${res.body}`);
      return result;
    },
  },
  {
    name: 'revoked grant, with a step-up',
    expect: { status: 401, error: 'grant_revoked' },
    run: async (c) => {
      const a = await c.agent();
      const stepup = await stepupFor(c.m, a, ACTION);
      await ownerCall(c.m, a, 'POST', `/api/grants/${a.grant.id}/revoke`);
      return c.verify(await agentRequest(c.m, a, { method: 'POST', path: '/checkout', stepup }), CHECKOUT);
    },
  },
];

/** The comparable part of a result. */
function outcome(r: VerifyResult): Expected {
  return r.ok ? { ok: true, stepup: r.stepup } : { status: r.status, error: r.error };
}

describe('the same pass + proof gives the same answer in cloud and local mode', () => {
  let m: Mandate;
  let verifiers: Record<'cloud' | 'local', Verifier>;

  before(async () => {
    m = await startMandate({ clock: new FixedClock(Date.UTC(2026, 10, 22, 12, 0, 0)) });
    const common = { serviceUrl: m.url, site: SITE, publicBaseUrl: PUBLIC_BASE, now: () => m.clock.now(), onError: quiet };
    verifiers = { cloud: createVerifier({ mode: 'cloud', ...common }), local: createVerifier({ mode: 'local', ...common }) };
    await verifiers.local.start();
  });
  after(async () => {
    verifiers.local.close();
    await m.close();
  });

  function ctx(mode: 'cloud' | 'local'): Ctx {
    const v = verifiers[mode];
    return {
      m,
      mode,
      agent: (o) => agentWithPass(m, o),
      async verify(req, route) {
        if (mode === 'local') await v.refresh();
        return v.verify(req, route);
      },
    };
  }

  for (const c of CASES) {
    it(c.name, async () => {
      const cloud = await c.run(ctx('cloud'));
      const local = await c.run(ctx('local'));
      assert.deepEqual(outcome(cloud), c.expect, `cloud: ${JSON.stringify(cloud)}`);
      assert.deepEqual(outcome(local), c.expect, `local: ${JSON.stringify(local)}`);
    });
  }

  it('a success carries the same facts in both modes; the agent name only in cloud mode', async () => {
    const results: VerifyResult[] = [];
    for (const mode of ['cloud', 'local'] as const) {
      const a = await agentWithPass(m, { scopes: ['orders:read'], userInfo: ['user:email'] });
      const r = await ctx(mode).verify(await agentRequest(m, a), { scope: 'orders:read' });
      assert.ok(r.ok, JSON.stringify(r));
      assert.equal(r.agentId, a.agent.id);
      assert.equal(r.userId, a.agent.owner.user.id);
      assert.deepEqual(r.userInfo, { 'user:email': a.agent.owner.email });
      results.push(r);
    }
    const [cloud, local] = results;
    assert.ok(cloud?.ok && local?.ok);
    assert.equal(cloud.agentName, 'Shopper');
    assert.equal(local.agentName, undefined);
    const { agentName: _n, agentId: _c, userId: _u, userInfo: _i, ...cloudRest } = cloud;
    const { agentName: _m, agentId: _d, userId: _v, userInfo: _j, ...localRest } = local;
    assert.deepEqual(cloudRest, localRest);
  });

  it('a step-up used up through one mode is refused by the other (single use is shared)', async () => {
    const a = await agentWithPass(m);
    const stepup = await stepupFor(m, a, ACTION);
    const first = await ctx('cloud').verify(await agentRequest(m, a, { method: 'POST', path: '/checkout', stepup }), CHECKOUT);
    assert.deepEqual(outcome(first), { ok: true, stepup: true });
    const second = await ctx('local').verify(await agentRequest(m, a, { method: 'POST', path: '/checkout', stepup }), CHECKOUT);
    assert.deepEqual(outcome(second), { status: 401, error: 'stepup_used_or_expired' });
  });
});
