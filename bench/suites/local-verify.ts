import { KeyObject, verify as nodeVerify } from 'node:crypto';
import { type JSONWebKeySet, importJWK, jwtVerify, decodeProtectedHeader } from 'jose';
import { RevocationIndex, VerifiedPassCache, keyResolverFromJwks, revocationVerdict, verifyPassAndProof, verifyRevocationSnapshot, type RevocationClaims, type VerifyPassAndProofInput } from '@mandate/protocol';
import { MemoryReplayCache, createVerifier } from '@mandate/site';
import { alternateInProcess, runInProcess } from '../lib/in-process.ts';
import { makeProofs } from '../lib/passes.ts';
import type { Proc } from '../lib/processes.ts';
import { SITE, SITE_URL, type BenchAgent } from '../lib/seed.ts';
import { type Row, ratio, rowOf } from '../lib/table.ts';
import type { LoadSettings } from './cloud-verify.ts';

/**
 * Local verification in this process (no HTTP): the site SDK as shipped (`createVerifier` in local
 * mode, keys and revocation list fetched from the running server once), and the protocol's local
 * path with the verified-pass cache and the indexed revocation list (what the SDK runs once it
 * passes them in), beside the in-process baseline: one ES256 `jwtVerify` of a fixed token.
 * Every call gets a fresh proof; the pass is the same throughout.
 */
export async function localVerifyRows(o: { mandate: Proc; baseUrl: string; agent: BenchAgent; pass: string; load: LoadSettings; note: string }): Promise<Row[]> {
  const jwks = (await (await fetch(`${o.mandate.origin}/api/v1/jwks`)).json()) as JSONWebKeySet;
  const passKid = decodeProtectedHeader(o.pass).kid;
  const passJwk = jwks.keys.find((k) => k.kid === passKid);
  if (passJwk === undefined) throw new Error('the pass key is not published');
  const passKey = await importJWK(passJwk, 'ES256');
  // The strictest baseline: the bare primitive the SDK's proof check uses (node:crypto's thread-pool
  // verify with a ready KeyObject), signature only, no JWT parsing or claim checks.
  const passKeyObject = passKey instanceof Uint8Array ? undefined : KeyObject.from(passKey);
  const lastDot = o.pass.lastIndexOf('.');
  const passSigningInput = Buffer.from(o.pass.slice(0, lastDot), 'ascii');
  const passSignature = Buffer.from(o.pass.slice(lastDot + 1), 'base64url');
  const primitiveVerify = () =>
    new Promise<boolean>((resolve, reject) =>
      nodeVerify('sha256', passSigningInput, { key: passKeyObject!, dsaEncoding: 'ieee-p1363' }, passSignature, (e, ok) => (e ? reject(e) : resolve(ok))));

  const sdk = createVerifier({ mode: 'local', serviceUrl: o.mandate.origin, issuer: o.baseUrl, site: SITE, publicBaseUrl: 'https://shop.example', onError: () => {} });
  await sdk.start();

  const resolver = keyResolverFromJwks(jwks);
  const snapshotBody = (await (await fetch(`${o.mandate.origin}/api/v1/revocation`)).json()) as { signature: string };
  const now = () => Math.floor(Date.now() / 1000);
  const snapshot: RevocationClaims = await verifyRevocationSnapshot(snapshotBody.signature, { keys: resolver, issuer: o.baseUrl, now: now() });
  const index = new RevocationIndex(snapshot);
  const passCache = new VerifiedPassCache();
  const replay = new MemoryReplayCache({ maxEntries: 1_000_000 });

  const opsPerRound = Math.ceil(o.load.requests / o.load.rounds);
  const total = o.load.warmup + opsPerRound;
  const settings = { concurrency: o.load.concurrency, ops: opsPerRound, warmup: o.load.warmup };
  const proofsFor = () => makeProofs(o.agent, o.pass, SITE_URL, total);

  // The protocol's local path with the pass cache; its two rows differ only in the revocation check.
  const protocolRun = (isRevoked: NonNullable<VerifyPassAndProofInput['isRevoked']>) => async () => {
    const proofs = await proofsFor();
    return runInProcess({
      ...settings,
      op: async (i) => {
        const t = now();
        const { claims } = await verifyPassAndProof({
          accessToken: o.pass, dpop: proofs[i], method: 'GET', url: SITE_URL, site: SITE, now: t, keys: resolver, issuer: o.baseUrl, passCache,
          isRevoked,
          consumeJti: (jti, exp) => replay.consume(jti, exp, t),
        });
        return claims.sub === o.agent.id;
      },
    });
  };

  const [base, sdkRun, cached, walked, primitive] = await alternateInProcess(o.load.rounds, [
    () => runInProcess({ ...settings, op: async () => (await jwtVerify(o.pass, passKey, { algorithms: ['ES256'] })).payload.sub === o.agent.id }),
    async () => {
      const proofs = await proofsFor();
      return runInProcess({ ...settings, op: async (i) => (await sdk.verify({ method: 'GET', url: '/orders', headers: { authorization: `DPoP ${o.pass}`, dpop: proofs[i] ?? '' } })).ok });
    },
    protocolRun(async (c) => index.verdict(c)),
    protocolRun(async (c) => revocationVerdict(c, snapshot)),
    () => runInProcess({ ...settings, op: primitiveVerify }),
  ]);
  sdk.close();
  const rss = process.memoryUsage().rss / 1024 / 1024;
  const entries = snapshot.revoked_agents.length + snapshot.revoked_grants.length;
  const rows = [
    rowOf('baseline: 1 ES256 jwtVerify (in-process)', o.note, base!.result, { rssMiB: rss, cpuUs: base!.cpuUs }),
    rowOf('local verify: site SDK as shipped', o.note, sdkRun!.result, { rssMiB: rss, cpuUs: sdkRun!.cpuUs, ratio: ratio(sdkRun!.result, base!.result) }),
    rowOf(`local verify: pass cache + indexed list (${entries} entries)`, o.note, cached!.result, { rssMiB: rss, cpuUs: cached!.cpuUs, ratio: ratio(cached!.result, base!.result) }),
    rowOf(`local verify: pass cache + list walked (${entries} entries)`, o.note, walked!.result, { rssMiB: rss, cpuUs: walked!.cpuUs, ratio: ratio(walked!.result, base!.result) }),
    rowOf('stricter baseline: 1 ES256 node:crypto verify, signature only', o.note, primitive!.result, { rssMiB: rss, cpuUs: primitive!.cpuUs, ratio: `SDK: ${(sdkRun!.result.perSec / primitive!.result.perSec).toFixed(2)} x this` }),
  ];
  for (const [name, r] of [['sdk', sdkRun], ['cached', cached], ['walked', walked]] as const) {
    if (r && r.result.errors > 0) console.error(`local verify (${name}): ${r.result.errors} failed verifications`);
  }
  return rows;
}
