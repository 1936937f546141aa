import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import type { PassClaims, SignatureChecker, VerifyErrorCode, VerifyPassAndProofInput, VerifyPassOptions } from '../src/index.ts';
import {
  ProtocolError,
  createAgentJwt,
  createDpopProof,
  keyResolverFromJwks,
  signServiceToken,
  verifyPass,
  verifyPassAndProof,
} from '../src/index.ts';
import type { Agent, Service } from './helpers.ts';
import {
  ISSUER,
  KID,
  NOW,
  SITE,
  URL_,
  b64json,
  highSTwin,
  mintPass,
  newAgent,
  newService,
  passClaims,
  rawProof,
  rejectsWith,
  signRaw,
} from './helpers.ts';

let agent: Agent;
let other: Agent;
let svc: Service;

before(async () => {
  agent = await newAgent();
  other = await newAgent();
  svc = await newService();
});

function opts(over: Partial<VerifyPassOptions> = {}): VerifyPassOptions {
  return { keys: svc.resolver, issuer: ISSUER, now: NOW, site: SITE, ...over };
}

/** The input with separate revocation and jti steps (the local verifier's way). */
type SeparateInput = Extract<VerifyPassAndProofInput, { consumeJti: unknown }>;

/** A request whose replay store is a Set, as a single node would keep it. */
function request(accessToken: unknown, dpop: unknown, seen: Set<string>, over: Partial<SeparateInput> = {}): SeparateInput {
  return {
    accessToken,
    dpop,
    method: 'POST',
    url: URL_,
    site: SITE,
    now: NOW,
    keys: svc.resolver,
    issuer: ISSUER,
    consumeJti: async (jti) => {
      if (seen.has(jti)) return false;
      seen.add(jti);
      return true;
    },
    ...over,
  };
}

describe('verifyPass', () => {
  it('accepts a valid pass and returns its claims (only known ones)', async () => {
    const token = await signServiceToken(svc.privateKey, { kid: KID, typ: 'at+jwt' }, { ...passClaims(agent), extra: 'x' });
    const claims = await verifyPass(token, opts());
    assert.deepEqual(claims, passClaims(agent));
  });

  it('accepts a pass checked against the url host (lower-cased, port ignored) when no site is given', async () => {
    const token = await mintPass(svc, agent);
    await verifyPass(token, opts({ site: undefined, url: 'https://SHOP.example:8443/x?y' }));
  });

  it('user_info is kept when present and must map strings to strings', async () => {
    const ok = await mintPass(svc, agent, { user_info: { 'user:email': 'a@b.example' } });
    assert.deepEqual((await verifyPass(ok, opts())).user_info, { 'user:email': 'a@b.example' });
    const bad = await signServiceToken(svc.privateKey, { kid: KID, typ: 'at+jwt' }, { ...passClaims(agent), user_info: { a: 5 } });
    await rejectsWith(verifyPass(bad, opts()), 'invalid_token');
  });

  it('wrong audience: wrong_site, with site and with url host', async () => {
    const token = await mintPass(svc, agent);
    await rejectsWith(verifyPass(token, opts({ site: 'other.example' })), 'wrong_site');
    await rejectsWith(verifyPass(token, opts({ site: 'SHOP.example' })), 'wrong_site');
    await rejectsWith(verifyPass(token, opts({ site: undefined, url: 'https://other.example/orders' })), 'wrong_site');
    await rejectsWith(verifyPass(token, opts({ site: undefined, url: 'https://shop.example.evil.example/' })), 'wrong_site');
  });

  it('neither site nor a usable url: invalid_request', async () => {
    const token = await mintPass(svc, agent);
    await rejectsWith(verifyPass(token, opts({ site: undefined })), 'invalid_request');
    await rejectsWith(verifyPass(token, opts({ site: undefined, url: 'ftp://shop.example/' })), 'invalid_request');
    await rejectsWith(verifyPass(token, opts({ site: '' })), 'invalid_request');
  });

  it('expired pass: token_expired at exp, valid one second before', async () => {
    const token = await mintPass(svc, agent, { iat: NOW - 600, exp: NOW });
    await rejectsWith(verifyPass(token, opts()), 'token_expired');
    await verifyPass(token, opts({ now: NOW - 1 }));
  });

  it('reports may accept an expired pass minted within the allowed age, never older', async () => {
    const old = await mintPass(svc, agent, { iat: NOW - 86400, exp: NOW - 86400 + 600 });
    await verifyPass(old, opts({ allowExpiredWithinSec: 7 * 86400 }));
    await rejectsWith(verifyPass(old, opts({ allowExpiredWithinSec: 3600 })), 'token_expired');
    await rejectsWith(verifyPass(old, opts()), 'token_expired');
  });

  it('issuer must match exactly', async () => {
    const token = await mintPass(svc, agent);
    await rejectsWith(verifyPass(token, opts({ issuer: `${ISSUER}/` })), 'invalid_token');
    const otherIss = await mintPass(svc, agent, { iss: 'https://evil.example' });
    await rejectsWith(verifyPass(otherIss, opts()), 'invalid_token');
  });

  it('missing or ill-typed claims: invalid_token', async () => {
    const base = passClaims(agent);
    const broken: Array<Record<string, unknown>> = [
      { ...base, scope: 'orders:read' },
      { ...base, scope: [1] },
      { ...base, cnf: undefined },
      { ...base, cnf: { dpop: 5, jkt: 5 } },
      { ...base, cnf: { dpop: agent.jkt, jkt: other.jkt } },
      { ...base, cnf: { dpop: agent.jkt } },
      { ...base, sub: undefined },
      { ...base, user: 7 },
      { ...base, aud: [SITE] },
      { ...base, exp: String(base.exp) },
      { ...base, exp: undefined },
      { ...base, iat: undefined },
      { ...base, rev_seq: -1 },
      { ...base, grant: undefined },
      { ...base, jti: '' },
    ];
    for (const claims of broken) {
      const token = await signServiceToken(svc.privateKey, { kid: KID, typ: 'at+jwt' }, claims);
      await rejectsWith(verifyPass(token, opts()), 'invalid_token');
    }
  });

  it('tampered payload or signature', async () => {
    const token = await mintPass(svc, agent);
    const [h, p, s] = token.split('.') as [string, string, string];
    const forged = b64json({ ...passClaims(agent), scope: ['admin'] });
    await rejectsWith(verifyPass(`${h}.${forged}.${s}`, opts()), 'invalid_token');
    for (let i = 0; i < p.length; i += 17) {
      const flipped = p.slice(0, i) + (p[i] === 'x' ? 'y' : 'x') + p.slice(i + 1);
      await rejectsWith(verifyPass(`${h}.${flipped}.${s}`, opts()), 'invalid_token');
    }
    await rejectsWith(verifyPass(`${h}.${p}.${s.slice(0, -2)}${s.endsWith('AA') ? 'BA' : 'AA'}`, opts()), 'invalid_token');
  });

  it('alg none, HS256 with the service public key, ES384, RS256', async () => {
    const claims = passClaims(agent);
    await rejectsWith(verifyPass(`${b64json({ alg: 'none', typ: 'at+jwt', kid: KID })}.${b64json(claims)}.`, opts()), 'invalid_token');
    await rejectsWith(verifyPass(`${b64json({ alg: 'none', typ: 'at+jwt', kid: KID })}.${b64json(claims)}.AAAA`, opts()), 'invalid_token');
    const hmacSecret = new TextEncoder().encode(JSON.stringify(svc.publicJwk));
    await rejectsWith(verifyPass(await signRaw({ alg: 'HS256', typ: 'at+jwt', kid: KID }, claims, hmacSecret), opts()), 'invalid_token');
    const es384 = await generateKeyPair('ES384');
    await rejectsWith(verifyPass(await signRaw({ alg: 'ES384', typ: 'at+jwt', kid: KID }, claims, es384.privateKey), opts()), 'invalid_token');
    const rsa = await generateKeyPair('RS256');
    await rejectsWith(verifyPass(await signRaw({ alg: 'RS256', typ: 'at+jwt', kid: KID }, claims, rsa.privateKey), opts()), 'invalid_token');
  });

  it('a pass signed by an agent key (not a service key) is refused', async () => {
    const forged = await signRaw({ alg: 'ES256', typ: 'at+jwt', kid: KID }, passClaims(agent), agent.privateKey);
    await rejectsWith(verifyPass(forged, opts()), 'invalid_token');
  });

  it('kid garbage: missing, number, 300 chars, 10 KB, unknown; the resolver never sees the bad ones', async () => {
    svc.calls.length = 0;
    for (const kid of [undefined, 5, '', 'k'.repeat(300), 'k'.repeat(10 * 1024), { a: 1 }]) {
      const token = await signRaw({ alg: 'ES256', typ: 'at+jwt', kid }, passClaims(agent), svc.privateKey);
      await rejectsWith(verifyPass(token, opts()), 'invalid_token');
    }
    assert.deepEqual(svc.calls, []);
    const unknown = await signRaw({ alg: 'ES256', typ: 'at+jwt', kid: 'unknown' }, passClaims(agent), svc.privateKey);
    await rejectsWith(verifyPass(unknown, opts()), 'invalid_token');
    assert.deepEqual(svc.calls, ['unknown']);
  });

  it('a JWKS works as key source; non-ES256 members are ignored', async () => {
    const rsa = await generateKeyPair('RS256', { extractable: true });
    const jwks = { keys: [{ ...(await exportJWK(rsa.publicKey)), kid: 'rsa' }, svc.publicJwk] };
    const token = await mintPass(svc, agent);
    await verifyPass(token, opts({ keys: jwks }));
    await verifyPass(token, opts({ keys: keyResolverFromJwks(jwks) }));
    const viaRsaKid = await signRaw({ alg: 'RS256', typ: 'at+jwt', kid: 'rsa' }, passClaims(agent), rsa.privateKey);
    await rejectsWith(verifyPass(viaRsaKid, opts({ keys: jwks })), 'invalid_token');
    const es256ViaRsaKid = await signRaw({ alg: 'ES256', typ: 'at+jwt', kid: 'rsa' }, passClaims(agent), svc.privateKey);
    await rejectsWith(verifyPass(es256ViaRsaKid, opts({ keys: jwks })), 'invalid_token');
  });

  it('an agent JWT or a DPoP proof presented as a pass is refused', async () => {
    await rejectsWith(verifyPass(await createAgentJwt(agent.privateKey, 'ag_x', { iat: NOW }), opts()), 'invalid_token');
    await rejectsWith(verifyPass(await rawProof(agent, 'tok'), opts()), 'invalid_token');
  });

  it('garbage inputs reject with ProtocolError only', async () => {
    for (const g of [undefined, null, 5, {}, [], '', 'a', 'a.b', 'a.b.c', 'a.b.c.d.e', '..', 'x'.repeat(20000), '\u0000.\u0000.\u0000']) {
      await rejectsWith(verifyPass(g, opts()), 'invalid_token');
    }
  });
});

describe('verifyPassAndProof', () => {
  async function proofFor(token: string, over: { iat?: number; jti?: string; htm?: string; htu?: string } = {}, who: Agent = agent): Promise<string> {
    return createDpopProof(who.privateKey, who.publicJwk, { htm: 'POST', htu: URL_, accessToken: token, iat: NOW, ...over });
  }

  it('accepts a valid pass + proof and consumes the jti once: the second use is dpop_replay', async () => {
    const token = await mintPass(svc, agent);
    const dpop = await proofFor(token, { jti: 'request-jti-1' });
    const seen = new Set<string>();
    const r = await verifyPassAndProof(request(token, dpop, seen));
    assert.deepEqual(r.proof, { jti: 'request-jti-1', jkt: agent.jkt });
    assert.deepEqual(r.claims, passClaims(agent));
    assert.deepEqual([...seen], ['request-jti-1']);
    await rejectsWith(verifyPassAndProof(request(token, dpop, seen)), 'dpop_replay');
  });

  it('the high-S twin of a used proof is a replay (the store keys on jti, not bytes)', async () => {
    const token = await mintPass(svc, agent);
    const dpop = await proofFor(token);
    const seen = new Set<string>();
    await verifyPassAndProof(request(token, dpop, seen));
    await rejectsWith(verifyPassAndProof(request(token, highSTwin(dpop), seen)), 'dpop_replay');
  });

  it('passes the jti with an expiry at least 250 s ahead', async () => {
    const token = await mintPass(svc, agent);
    let expiry = 0;
    await verifyPassAndProof({
      ...request(token, await proofFor(token), new Set()),
      consumeJti: async (_jti, exp) => {
        expiry = exp;
        return true;
      },
    });
    assert.equal(expiry, NOW + 250);
  });

  it('a failed check does not burn the jti', async () => {
    const token = await mintPass(svc, agent);
    const dpop = await proofFor(token, { jti: 'retry-jti-123' });
    const seen = new Set<string>();
    await rejectsWith(verifyPassAndProof(request(token, dpop, seen, { method: 'GET' })), 'dpop_method_mismatch');
    await rejectsWith(verifyPassAndProof(request(token, dpop, seen, { isRevoked: async () => 'grant_revoked' })), 'grant_revoked');
    assert.equal(seen.size, 0);
    await verifyPassAndProof(request(token, dpop, seen));
  });

  it('revocation hook verdicts are returned as their codes', async () => {
    const token = await mintPass(svc, agent);
    let seenClaims: PassClaims | undefined;
    await rejectsWith(
      verifyPassAndProof(
        request(token, await proofFor(token), new Set(), {
          isRevoked: async (c) => {
            seenClaims = c;
            return 'agent_revoked';
          },
        }),
      ),
      'agent_revoked',
    );
    assert.equal(seenClaims?.sub, passClaims(agent).sub);
    await verifyPassAndProof(request(token, await proofFor(token), new Set(), { isRevoked: async () => null }));
  });

  it('a proof signed by another key than the pass is bound to: dpop_key_mismatch', async () => {
    const token = await mintPass(svc, agent);
    await rejectsWith(verifyPassAndProof(request(token, await proofFor(token, {}, other), new Set())), 'dpop_key_mismatch');
  });

  it('a proof made for another access token: invalid_dpop', async () => {
    const token = await mintPass(svc, agent);
    const token2 = await mintPass(svc, agent, { jti: 'pass-jti-2' });
    await rejectsWith(verifyPassAndProof(request(token, await proofFor(token2), new Set())), 'invalid_dpop');
  });

  it('url / method / iat errors come from the proof check', async () => {
    const token = await mintPass(svc, agent);
    await rejectsWith(verifyPassAndProof(request(token, await proofFor(token, { htu: 'https://shop.example/orders/42/' }), new Set())), 'dpop_url_mismatch');
    await rejectsWith(verifyPassAndProof(request(token, await proofFor(token, { htm: 'PUT' }), new Set())), 'dpop_method_mismatch');
    await rejectsWith(verifyPassAndProof(request(token, await proofFor(token, { iat: NOW - 121 }), new Set())), 'dpop_stale');
  });

  it('with site, the url may be any address of the site; the proof must match that url', async () => {
    const token = await mintPass(svc, agent);
    const proxyUrl = 'http://127.0.0.1:3000/orders/42';
    await verifyPassAndProof(request(token, await proofFor(token, { htu: proxyUrl }), new Set(), { url: proxyUrl }));
    await rejectsWith(verifyPassAndProof(request(token, await proofFor(token, { htu: proxyUrl }), new Set(), { url: proxyUrl, site: undefined })), 'wrong_site');
  });

  it('pass errors come first and the pass is checked for the url host without site', async () => {
    const expired = await mintPass(svc, agent, { iat: NOW - 700, exp: NOW - 100 });
    await rejectsWith(verifyPassAndProof(request(expired, await proofFor(expired), new Set())), 'token_expired');
    const token = await mintPass(svc, agent, { aud: 'other.example' });
    await rejectsWith(verifyPassAndProof(request(token, await proofFor(token), new Set(), { site: undefined })), 'wrong_site');
  });

  it('missing proof or garbage inputs reject with ProtocolError', async () => {
    const token = await mintPass(svc, agent);
    for (const dpop of [undefined, '', 5, 'a.b', 'a.b.c.d.e']) {
      await rejectsWith(verifyPassAndProof(request(token, dpop, new Set())), 'invalid_dpop');
    }
    await rejectsWith(verifyPassAndProof(request(token, await proofFor(token), new Set(), { url: '' })), 'invalid_request');
    await rejectsWith(verifyPassAndProof(request(undefined, await proofFor(token), new Set())), 'invalid_token');
  });

  describe('with checkAndConsume (revocation and jti in one step)', () => {
    const combined = (
      token: string,
      dpop: string,
      step: (claims: PassClaims, jti: string, exp: number) => Promise<{ verdict: VerifyErrorCode | null; fresh: boolean }>,
      extra: { released?: string[]; proofSignatureCheck?: SignatureChecker } = {},
    ): VerifyPassAndProofInput => ({
      accessToken: token, dpop, method: 'POST', url: URL_, site: SITE, now: NOW, keys: svc.resolver, issuer: ISSUER, checkAndConsume: step,
      releaseJti: async (jti) => void extra.released?.push(jti),
      ...(extra.proofSignatureCheck ? { proofSignatureCheck: extra.proofSignatureCheck } : {}),
    });
    /** invalid_dpop for the proof's signature (not any other of its checks). */
    const refusedForSignature = (p: Promise<unknown>) =>
      assert.rejects(p, (e: unknown) => e instanceof ProtocolError && e.code === 'invalid_dpop' && /signature is invalid/.test(e.message));
    /** The proof with the signature of another proof by the same key: well formed, claims right, signature wrong. */
    const forged = async (token: string, over: { jti?: string; htm?: string } = {}) => {
      const [h, p] = (await proofFor(token, over)).split('.');
      const sig = (await proofFor(token, { jti: 'another-proof-jti' })).split('.')[2];
      return `${h}.${p}.${sig}`;
    };

    it('gets the pass claims, the jti and an expiry at least 250 s ahead; a fresh jti and no verdict accept', async () => {
      const token = await mintPass(svc, agent);
      const calls: [string, string, number][] = [];
      const r = await verifyPassAndProof(combined(token, await proofFor(token, { jti: 'combined-jti-1' }), async (claims, jti, exp) => {
        calls.push([claims.cnf.dpop, jti, exp]);
        return { verdict: null, fresh: true };
      }));
      assert.equal(r.proof.jti, 'combined-jti-1');
      assert.deepEqual(calls, [[agent.jkt, 'combined-jti-1', NOW + 250]]);
    });

    it('a verdict refuses with its code, before replay; a used jti is dpop_replay', async () => {
      const token = await mintPass(svc, agent);
      await rejectsWith(verifyPassAndProof(combined(token, await proofFor(token), async () => ({ verdict: 'grant_revoked', fresh: false }))), 'grant_revoked');
      await rejectsWith(verifyPassAndProof(combined(token, await proofFor(token), async () => ({ verdict: 'agent_revoked', fresh: true }))), 'agent_revoked');
      await rejectsWith(verifyPassAndProof(combined(token, await proofFor(token), async () => ({ verdict: null, fresh: false }))), 'dpop_replay');
    });

    it('is not called when the pass or the proof fails', async () => {
      const token = await mintPass(svc, agent);
      let called = false;
      const step = async () => {
        called = true;
        return { verdict: null, fresh: true };
      };
      await rejectsWith(verifyPassAndProof(combined(token, await proofFor(token, { htm: 'GET' }), step)), 'dpop_method_mismatch');
      await rejectsWith(verifyPassAndProof(combined(token, await proofFor(token, {}, other), step)), 'dpop_key_mismatch');
      await rejectsWith(verifyPassAndProof(combined(`${token}x`, await proofFor(token), step)), 'invalid_token');
      assert.equal(called, false);
    });

    it('runs while the signature is checked: started before the check answers', { timeout: 10_000 }, async () => {
      const token = await mintPass(svc, agent);
      const order: string[] = [];
      let answer: (ok: boolean) => void = () => {};
      const check: SignatureChecker = () => {
        order.push('signature asked');
        return new Promise<boolean>((resolve) => (answer = resolve));
      };
      const done = verifyPassAndProof(combined(token, await proofFor(token), async () => {
        order.push('step');
        queueMicrotask(() => answer(true));
        return { verdict: null, fresh: true };
      }, { proofSignatureCheck: check }));
      await done;
      assert.deepEqual(order, ['signature asked', 'step']);
    });

    it('a proof whose signature fails is invalid_dpop and gets back the jti the step spent (only when it spent it)', async () => {
      const token = await mintPass(svc, agent);
      const released: string[] = [];
      const fresh = await forged(token, { jti: 'forged-jti-fresh' });
      await refusedForSignature(verifyPassAndProof(combined(token, fresh, async () => ({ verdict: null, fresh: true }), { released })));
      await refusedForSignature(verifyPassAndProof(combined(token, await forged(token, { jti: 'forged-jti-spent' }), async () => ({ verdict: null, fresh: false }), { released })));
      // Revoked and forged: the signature answers first, and the spent jti is given back too.
      await refusedForSignature(verifyPassAndProof(combined(token, await forged(token, { jti: 'forged-jti-revoked' }), async () => ({ verdict: 'agent_revoked', fresh: true }), { released })));
      assert.deepEqual(released, ['forged-jti-fresh', 'forged-jti-revoked']);
    });

    it('a forged proof that also fails another check is judged by its signature, and the step never runs', async () => {
      const token = await mintPass(svc, agent);
      let called = false;
      const step = async () => {
        called = true;
        return { verdict: null, fresh: true };
      };
      await refusedForSignature(verifyPassAndProof(combined(token, await forged(token, { htm: 'GET' }), step)));
      assert.equal(called, false);
    });

    it("the step's own error counts only for a proof whose signature verified; a checker that cannot check fails the call and gives the jti back", async () => {
      const token = await mintPass(svc, agent);
      const broken = async () => {
        throw new Error('database down');
      };
      await assert.rejects(verifyPassAndProof(combined(token, await proofFor(token), broken)), /database down/);
      await refusedForSignature(verifyPassAndProof(combined(token, await forged(token), broken)));
      const released: string[] = [];
      const stopped: SignatureChecker = () => Promise.reject(new Error('signature thread stopped'));
      await assert.rejects(verifyPassAndProof(combined(token, await proofFor(token, { jti: 'thread-stopped-jti' }), async () => ({ verdict: null, fresh: true }), { released, proofSignatureCheck: stopped })), /signature thread stopped/);
      assert.deepEqual(released, ['thread-stopped-jti']);
    });
  });
});
