/**
 * The OIDC token endpoint, `grant_type=refresh_token`, beside oidc-provider 8's own token endpoint
 * measured in the same run (bench/README.md, "OIDC token refresh"). Each side's sign-ins belong to
 * the load generator's workers: a worker refreshes its own sign-ins in turn, each call with the
 * refresh token the last answer for that sign-in gave (both sides rotate on every use).
 *
 * Mandate's sign-ins are made over HTTP as a relying party and its agents would make them: the owner
 * registers a confidential client (redirect URI on OIDC_SITE), agents with a live grant for
 * OIDC_SITE (scope `openid`) call `GET /oidc/authorize` with their `X-Service-Agent` header and get a
 * code at once, and the client redeems it (PKCE S256, `client_secret_basic`) for the first refresh
 * token. Enough sign-ins and agents are made that no sign-in is refreshed 40 times in the whole run
 * and no agent authorizes 40 times (the limits are 60 a minute each; counted over the whole run, this
 * holds whatever the run's length); any answer but 200 (a 429 included) fails the suite.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createAgentJwt, generateAgentKeyPair, jwkThumbprint } from '@mandate/protocol';
import { newId } from '../../packages/server/src/domain/ids.ts';
import type { Store } from '../../packages/server/src/store/ports/index.ts';
import { type LoadResult, combineRounds, runLoad } from '../lib/load.ts';
import type { OidcProviderPeer } from '../lib/oidc-provider-peer.ts';
import type { Proc } from '../lib/processes.ts';
import type { BenchAgent, BenchOwner } from '../lib/seed.ts';
import { type Row, formatTable, ratio, rowOf } from '../lib/table.ts';
import { dbCpu, measured, type LoadSettings } from './cloud-verify.ts';

/** The relying party's host: the grants' site, the host of the client's redirect URI. */
export const OIDC_SITE = 'rp.example';
export const OIDC_REDIRECT_URI = `https://${OIDC_SITE}/cb`;

/** Refreshes of one sign-in over the whole run: under the limit of 60 a minute per sign-in, with room for workers that take more than their share. */
const REFRESHES_PER_SIGN_IN = 40;
/** Sign-ins (authorize calls) per agent, under the limit of 60 authorize calls a minute per agent. */
const SIGN_INS_PER_AGENT = 40;

export interface OidcPlan {
  perRound: number;
  /** Warm-up requests at the start of each round (not measured). */
  warmup: number;
  /** Mandate's sign-ins: a multiple of the concurrency (each worker owns signIns / concurrency). */
  signIns: number;
  agents: number;
}

/**
 * How many sign-ins and agents a run needs: every refresh Mandate is sent (warm-ups included) spread
 * over enough sign-ins that none gets REFRESHES_PER_SIGN_IN; counted over the whole run, so no window
 * of a minute can hold more, however fast the server answers.
 */
export function oidcPlan(load: LoadSettings): OidcPlan {
  const perRound = Math.ceil(load.requests / load.rounds);
  const warmup = Math.min(load.warmup, Math.ceil(perRound / 4));
  const total = load.rounds * (perRound + warmup);
  const perWorker = Math.max(1, Math.ceil(total / REFRESHES_PER_SIGN_IN / load.concurrency));
  const signIns = perWorker * load.concurrency;
  return { perRound, warmup, signIns, agents: Math.ceil(signIns / SIGN_INS_PER_AGENT) };
}

/** Agents with real key pairs, each with a live grant for OIDC_SITE covering `openid` (seeded in the store, as seedAgents does). */
export async function seedOidcAgents(store: Store, owner: BenchOwner, count: number, now: number): Promise<BenchAgent[]> {
  const agents: BenchAgent[] = [];
  for (let i = 0; i < count; i++) {
    const { privateKey, publicJwk } = await generateAgentKeyPair();
    const jkt = await jwkThumbprint(publicJwk);
    const id = newId('ag');
    await store.agents.create({ id, userId: owner.userId, name: `bench oidc agent ${i}`, kind: 'agent', clientId: null, publicJwk, jkt, status: 'active', flag: 'ok', flagRevSeq: null, createdAt: now, removedAt: null, unblockedAt: null, unblockedRevSeq: null });
    await store.grants.create({ id: newId('gr'), userId: owner.userId, agentId: id, site: OIDC_SITE, scopes: ['openid'], userInfo: [], status: 'active', createdAt: now, expiresAt: null, usesLeft: null, refreshHash: null, passesIssued: 0, revokedAt: null, revSeq: null, supersededAt: null, resource: null });
    agents.push({ id, privateKey, publicJwk, jkt });
  }
  return agents;
}

/** RFC 6749 §2.3.1: client id and secret form-urlencoded, then `id:secret` in base64. */
export const basicAuth = (id: string, secret: string): string => {
  const enc = (s: string) => new URLSearchParams({ s }).toString().slice(2);
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`;
};

const FORM = 'application/x-www-form-urlencoded';

async function expect200(res: Response, what: string): Promise<string> {
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${what} answered ${res.status}: ${text.slice(0, 500)}`);
  return text;
}

/** The owner registers the relying party (`POST /api/oidc/clients`, a confidential client). */
async function registerClient(origin: string, owner: BenchOwner): Promise<{ clientId: string; secret: string }> {
  const res = await fetch(`${origin}/api/oidc/clients`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.sessionToken}` },
    body: JSON.stringify({ name: 'Bench relying party', redirect_uris: [OIDC_REDIRECT_URI] }),
  });
  const c = JSON.parse(await expect200(res, 'POST /api/oidc/clients')) as { client_id: string; client_secret?: string };
  if (c.client_secret === undefined) throw new Error('the bench client came back without a secret');
  return { clientId: c.client_id, secret: c.client_secret };
}

/**
 * One sign-in: the agent's authorize call (its header's `htu` is the URL under the issuer, as the
 * server reads it), a code at once under the grant, redeemed with PKCE and client_secret_basic.
 * Answers the first refresh token.
 */
async function signIn(o: { origin: string; issuer: string; agent: BenchAgent; clientId: string; auth: string }): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    response_type: 'code', client_id: o.clientId, redirect_uri: OIDC_REDIRECT_URI, scope: 'openid',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    state: randomBytes(8).toString('base64url'),
  });
  const path = `/oidc/authorize?${query}`;
  const header = await createAgentJwt(o.agent.privateKey, o.agent.id, { lifetimeSec: 60, jti: randomBytes(12).toString('base64url'), htu: `${o.issuer}${path}` });
  const res = await fetch(`${o.origin}${path}`, { redirect: 'manual', headers: { 'x-service-agent': header } });
  const location = res.headers.get('location') ?? '';
  const code = location.startsWith(OIDC_REDIRECT_URI) ? new URL(location).searchParams.get('code') : null;
  if (res.status !== 302 || code === null) throw new Error(`GET /oidc/authorize answered ${res.status} ${location}: ${(await res.text()).slice(0, 500)}`);
  const token = await fetch(`${o.origin}/oidc/token`, {
    method: 'POST',
    headers: { 'content-type': FORM, authorization: o.auth },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: OIDC_REDIRECT_URI, code_verifier: verifier }).toString(),
  });
  return (JSON.parse(await expect200(token, 'POST /oidc/token (authorization_code)')) as { refresh_token: string }).refresh_token;
}

/** Mandate's sign-ins: `plan.signIns` over the agents, SIGN_INS_PER_AGENT at most each, a few at a time. */
async function mandateSignIns(o: { mandate: Proc; issuer: string; owner: BenchOwner; agents: readonly BenchAgent[]; plan: OidcPlan }): Promise<{ auth: string; tokens: string[] }> {
  if (o.agents.length < o.plan.agents) throw new Error(`oidc bench: needs ${o.plan.agents} agents, has ${o.agents.length}`);
  const { clientId, secret } = await registerClient(o.mandate.origin, o.owner);
  const auth = basicAuth(clientId, secret);
  const tokens = new Array<string>(o.plan.signIns);
  let next = 0;
  const worker = async () => {
    for (let k = next++; k < o.plan.signIns; k = next++) {
      tokens[k] = await signIn({ origin: o.mandate.origin, issuer: o.issuer, agent: o.agents[k % o.plan.agents] as BenchAgent, clientId, auth });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return { auth, tokens };
}

const isTokenAnswer = (body: string): { refresh_token: string } | undefined => {
  try {
    const t = JSON.parse(body) as { refresh_token?: unknown; id_token?: unknown; access_token?: unknown };
    return typeof t.refresh_token === 'string' && typeof t.id_token === 'string' && typeof t.access_token === 'string' ? { refresh_token: t.refresh_token } : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Refreshes against one token endpoint: each worker owns `tokens.length / concurrency` sign-ins and
 * takes them in turn; every good answer's refresh token replaces the one it was sent.
 */
function refreshes(o: { origin: string; path: string; auth: string; tokens: string[]; concurrency: number }, requests: number): Promise<LoadResult> {
  const c = o.concurrency;
  const perWorker = Math.floor(o.tokens.length / c);
  const sent = new Array<number>(c).fill(0);
  return runLoad({
    origin: o.origin,
    concurrency: c,
    requests,
    warmup: 0,
    next: (_i, w) => {
      const k = w + c * ((sent[w] = (sent[w] ?? 0) + 1) % perWorker);
      const body = `grant_type=refresh_token&refresh_token=${encodeURIComponent(o.tokens[k] ?? '')}`;
      return { method: 'POST', path: o.path, tag: k, body, headers: { 'content-type': FORM, authorization: o.auth } };
    },
    ok: (status, body, req) => {
      const answer = status === 200 ? isTokenAnswer(body) : undefined;
      if (answer === undefined || req.tag === undefined) return false;
      o.tokens[req.tag] = answer.refresh_token;
      return true;
    },
  });
}

interface Side {
  proc: Proc;
  origin: string;
  path: string;
  auth: string;
  tokens: string[];
  concurrency: number;
}

/**
 * Rounds of peer and Mandate taking turns (peer first): each round a warm-up, then the measured
 * requests with the CPU its process spent on them alone (the warm-up is outside the count).
 */
async function takeTurns(rounds: number, plan: OidcPlan, sides: readonly [Side, Side]) {
  const acc = sides.map(() => ({ results: [] as LoadResult[], cpuMs: 0, dbCpuMs: 0, warmupErrors: 0, firstError: undefined as string | undefined }));
  for (let round = 0; round < rounds; round++) {
    for (const [k, side] of sides.entries()) {
      const a = acc[k];
      if (!a) continue;
      const warm = await refreshes(side, plan.warmup);
      a.warmupErrors += warm.errors;
      a.firstError ??= warm.firstError;
      const m = await measured(side.proc, () => refreshes(side, plan.perRound));
      a.results.push(m.result);
      a.cpuMs += m.cpuMs;
      a.dbCpuMs += m.dbCpuMs;
    }
  }
  return acc.map((a) => {
    const result = combineRounds(a.results);
    return { result, warmupErrors: a.warmupErrors, firstError: a.firstError ?? result.firstError, cpuUs: (a.cpuMs * 1000) / result.requests, dbCpuUs: (a.dbCpuMs * 1000) / result.requests };
  });
}

export async function oidcTokenRows(o: { mandate: Proc; issuer: string; peer: OidcProviderPeer; owner: BenchOwner; agents: readonly BenchAgent[]; store: string; load: LoadSettings }): Promise<Row[]> {
  const plan = oidcPlan(o.load);
  const c = o.load.concurrency;
  const mandate = await mandateSignIns({ mandate: o.mandate, issuer: o.issuer, owner: o.owner, agents: o.agents, plan });
  // The peer has no rate limit: one sign-in per worker. Its default adapter is an LRU of 1000
  // entries (about 5 touched per refresh), which would drop refresh tokens with many more in use.
  const peerTokens = await o.peer.mint(c);
  const peerAuth = basicAuth(o.peer.clientId, o.peer.clientSecret);
  const [peer, ours] = await takeTurns(o.load.rounds, plan, [
    { proc: o.peer.proc, origin: o.peer.proc.origin, path: '/token', auth: peerAuth, tokens: peerTokens, concurrency: c },
    { proc: o.mandate, origin: o.mandate.origin, path: '/oidc/token', auth: mandate.auth, tokens: mandate.tokens, concurrency: c },
  ]);
  if (!peer || !ours) throw new Error('oidc bench: a side is missing');
  const inFlight = `, ${c} in flight`;
  const rows = [
    rowOf(`oidc-provider 8 POST /token (refresh, in-memory adapter)${inFlight}`, 'memory', peer.result, { rssMiB: o.peer.proc.rssMiB(), cpuUs: peer.cpuUs }),
    rowOf(`oidc token refresh POST /oidc/token (mandate, ${plan.signIns} sign-ins)${inFlight}`, o.store, ours.result, { rssMiB: o.mandate.rssMiB(), cpuUs: ours.cpuUs, ratio: ratio(ours.result, peer.result), ...dbCpu(o.store, ours.dbCpuUs) }),
  ];
  const failed = ([['oidc-provider', peer], ['mandate', ours]] as const).filter(([, s]) => s.result.errors + s.warmupErrors > 0);
  if (failed.length > 0) {
    // Loud: a 429 means the sign-ins or agents above are too few for the limits (or the limits changed).
    console.error(formatTable('OIDC token refresh (failed)', rows));
    throw new Error(`oidc token refresh: answers other than 200 with tokens: ${failed.map(([name, s]) => `${name} ${s.result.errors + s.warmupErrors} (warm-ups included), first: ${s.firstError}`).join('; ')}`);
  }
  return rows;
}
