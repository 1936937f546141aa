import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import {
  createDpopProof,
  generateAgentKeyPair,
  jwkThumbprint,
  signPass,
  signRevocationSnapshot,
  type EcP256PublicJwk,
  type PassClaims,
  type RevocationClaims,
} from '@mandate/protocol';

/**
 * A stand-in for Mandate's key and revocation endpoints, fully under the test's control: what
 * `GET /api/v1/jwks` and `GET /api/v1/revocation` answer, and a record of every call. Used where a
 * real service cannot be made to misbehave (old, forged or wrongly typed snapshots; outages).
 */

export type ServiceKey = { kid: string; privateKey: CryptoKey; publicJwk: JWK };

export async function serviceKey(kid: string): Promise<ServiceKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

export type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

export type Stub = {
  url: string;
  /** What each path answers; change at will. A function is called per request. */
  routes: Map<string, Answer | ((req: IncomingMessage) => Answer)>;
  /** Every request: path, If-None-Match and the JSON body (if any). */
  calls: { path: string; ifNoneMatch: string | undefined; body: unknown }[];
  count(path: string): number;
  close(): Promise<void>;
};

export async function startStub(): Promise<Stub> {
  const routes: Stub['routes'] = new Map();
  const calls: Stub['calls'] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const path = req.url ?? '';
      const inm = req.headers['if-none-match'];
      calls.push({ path, ifNoneMatch: typeof inm === 'string' ? inm : undefined, body: text === '' ? undefined : JSON.parse(text) });
      const route = routes.get(path);
      const answer = typeof route === 'function' ? route(req) : (route ?? { status: 404, body: { detail: 'not found' } });
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    routes,
    calls,
    count: (path) => calls.filter((c) => c.path === path).length,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export function jwksOf(...keys: ServiceKey[]): Answer {
  return { status: 200, body: { keys: keys.map((k) => k.publicJwk) } };
}

export async function snapshotAnswer(key: ServiceKey, claims: RevocationClaims, etag = `"${claims.rev_seq}-${claims.iat}"`): Promise<Answer> {
  const signature = await signRevocationSnapshot(key.privateKey, key.kid, claims);
  return { status: 200, body: { signature, rev_seq: claims.rev_seq, revoked_agents: claims.revoked_agents, revoked_grants: claims.revoked_grants }, headers: { etag } };
}

export function revocationClaims(issuer: string, iat: number, revSeq: number, over: Partial<RevocationClaims> = {}): RevocationClaims {
  return { type: 'revocation', iss: issuer, iat, rev_seq: revSeq, revoked_agents: [], revoked_grants: [], ...over };
}

export type StubAgent = { id: string; privateKey: CryptoKey; publicJwk: EcP256PublicJwk; jkt: string };

export async function stubAgent(): Promise<StubAgent> {
  const { privateKey, publicJwk } = await generateAgentKeyPair();
  return { id: `ag_${randomBytes(8).toString('hex')}`, privateKey, publicJwk, jkt: await jwkThumbprint(publicJwk) };
}

/** A pass signed by `key`, and a request carrying it with a fresh proof for GET base + path. */
export async function stubRequest(
  key: ServiceKey,
  agent: StubAgent,
  o: { issuer: string; site: string; base: string; nowSec: number; path?: string; revSeq?: number },
): Promise<{ method: string; url: string; headers: Record<string, string> }> {
  const path = o.path ?? '/orders';
  const claims: PassClaims = {
    iss: o.issuer,
    sub: agent.id,
    aud: o.site,
    user: 'u_stubperson',
    scope: ['list'],
    user_info: {},
    cnf: { dpop: agent.jkt, jkt: agent.jkt },
    type: 'access',
    iat: o.nowSec,
    exp: o.nowSec + 600,
    jti: randomBytes(12).toString('base64url'),
    grant: 'gr_stub',
    rev_seq: o.revSeq ?? 0,
  };
  const pass = await signPass(key.privateKey, key.kid, claims);
  const dpop = await createDpopProof(agent.privateKey, agent.publicJwk, { htm: 'GET', htu: o.base + path, accessToken: pass, iat: o.nowSec });
  return { method: 'GET', url: path, headers: { authorization: `Bearer ${pass}`, dpop } };
}
