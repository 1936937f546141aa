import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import {
  ProtocolError,
  type ResourcePassClaims,
  type ResourceTokenScheme,
  type RevokedGrant,
  createDpopProof,
  revocationVerdict,
  signResourcePass,
  signRevocationSnapshot,
  signStepupToken,
  verifyResourceRequest,
  verifyStepupToken,
} from '@mandate/protocol';
import { type ServiceKey, type StubAgent, serviceKey, stubAgent } from './stub-service.ts';

/**
 * A stand-in for the parts of Mandate an MCP server protected by `mcpAuth` talks to: keys, the
 * signed revocation list, cloud verify of resource passes (with the protocol's own
 * `verifyResourceRequest`, as the service does), and the site step-up (file, long poll, use up). The
 * owner's answer is the test's: `answer(txn, 'approved' | 'denied')`. Every call is recorded.
 */
export type StepupRecord = {
  txn: string;
  pass: string;
  action: string;
  details: { summary: string; digest: string };
  status: 'pending' | 'approved' | 'denied' | 'expired';
  collected: boolean;
  token?: string;
};

export type StandIn = {
  url: string;
  key: ServiceKey;
  revokedGrants: RevokedGrant[];
  stepups: StepupRecord[];
  calls: { method: string; path: string; body: unknown }[];
  count(method: string, prefix: string): number;
  /** Used-up step-up jtis. */
  used: Set<string>;
  /** Answers that replace a route's, by `METHOD /path` (no query): outages, limits. */
  overrides: Map<string, { status: number; body?: unknown; headers?: Record<string, string> }>;
  answer(txn: string, status: 'approved' | 'denied' | 'expired'): Promise<void>;
  close(): Promise<void>;
};

const nowSec = (): number => Math.floor(Date.now() / 1000);

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

export async function startStandIn(): Promise<StandIn> {
  const key = await serviceKey('k-mcp');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const revokedGrants: RevokedGrant[] = [];
  const stepups: StepupRecord[] = [];
  const calls: StandIn['calls'] = [];
  const seenJti = new Set<string>();
  const used = new Set<string>();
  const waiters = new Set<() => void>();
  const overrides: StandIn['overrides'] = new Map();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  const snapshot = () => ({ type: 'revocation' as const, iss: url, iat: nowSec(), rev_seq: revokedGrants.length, revoked_agents: [], revoked_grants: revokedGrants });

  async function route(req: IncomingMessage, body: unknown, res: ServerResponse): Promise<void> {
    const u = new URL(req.url ?? '/', url);
    const b = (body ?? {}) as Record<string, unknown>;
    const override = overrides.get(`${req.method} ${u.pathname}`);
    if (override !== undefined) {
      res.writeHead(override.status, { 'content-type': 'application/json', ...override.headers });
      return void res.end(override.body === undefined ? '' : JSON.stringify(override.body));
    }
    if (req.method === 'GET' && u.pathname === '/api/v1/jwks') return send(res, 200, { keys: [key.publicJwk] });
    if (req.method === 'GET' && u.pathname === '/api/v1/revocation') {
      const claims = snapshot();
      return send(res, 200, { signature: await signRevocationSnapshot(key.privateKey, key.kid, claims), ...claims });
    }
    if (req.method === 'POST' && u.pathname === '/api/v1/verify') {
      try {
        const { claims } = await verifyResourceRequest({
          accessToken: b['access_token'],
          scheme: b['token_type'] as ResourceTokenScheme,
          dpop: b['dpop'],
          method: String(b['method']),
          url: String(b['url']),
          keys: { keys: [key.publicJwk] },
          issuer: url,
          now: nowSec(),
          resource: String(b['resource']),
          isRevoked: async (c) => revocationVerdict(c, snapshot()),
          consumeJti: async (jti) => (seenJti.has(jti) ? false : (seenJti.add(jti), true)),
        });
        return send(res, 200, {
          valid: true,
          agent_id: claims.sub,
          agent_name: 'Notes app',
          user_id: claims.user,
          site: new URL(claims.aud).host,
          scopes: claims.scope,
          scope: claims.scope,
          user_info: claims.user_info ?? {},
          stepup: false,
          client_id: claims.client_id,
          resource: claims.aud,
        });
      } catch (e) {
        if (e instanceof ProtocolError) return send(res, 200, { valid: false, error: e.code, error_description: e.message });
        throw e;
      }
    }
    if (req.method === 'POST' && u.pathname === '/api/v1/stepup/site') {
      const record: StepupRecord = {
        txn: `t_${randomBytes(8).toString('hex')}`,
        pass: String(b['access_token']),
        action: String(b['action']),
        details: b['details'] as StepupRecord['details'],
        status: 'pending',
        collected: false,
      };
      stepups.push(record);
      return send(res, 200, { txn_id: record.txn, expires_in: 300 });
    }
    const poll = /^\/api\/v1\/stepup\/site\/([^/]+)$/.exec(u.pathname);
    if (req.method === 'GET' && poll !== null) {
      const record = stepups.find((s) => s.txn === poll[1]);
      if (record === undefined || req.headers.authorization !== `Bearer ${record.pass}`) return send(res, 404, { detail: 'not found' });
      const wait = Number(u.searchParams.get('wait') ?? '0');
      if (!Number.isInteger(wait) || wait < 0 || wait > 25) return send(res, 400, { detail: 'wait' });
      if (record.status === 'pending' && wait > 0) {
        await new Promise<void>((resolve) => {
          const done = () => {
            waiters.delete(done);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(done, wait * 1000);
          waiters.add(done);
        });
      }
      if (record.status === 'approved') {
        if (record.collected) return send(res, 200, { status: 'consumed' });
        record.collected = true;
        return send(res, 200, { status: 'approved', stepup_token: record.token });
      }
      return send(res, 200, { status: record.status });
    }
    if (req.method === 'POST' && u.pathname === '/api/v1/stepup/verify') {
      try {
        const claims = await verifyStepupToken(b['stepup_token'], {
          keys: { keys: [key.publicJwk] },
          issuer: url,
          now: nowSec(),
          site: String(b['site']),
          action: String(b['action']),
          ...(typeof b['details_digest'] === 'string' ? { detailsDigest: b['details_digest'] } : {}),
        });
        if (used.has(claims.jti)) throw new ProtocolError('stepup_used_or_expired');
        used.add(claims.jti);
        return send(res, 200, { valid: true, agent_id: claims.sub, user_id: claims.user, action: String(b['action']) });
      } catch (e) {
        if (e instanceof ProtocolError) return send(res, 200, { valid: false, error: e.code, error_description: e.message });
        throw e;
      }
    }
    return send(res, 404, { detail: 'not found' });
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const body: unknown = text === '' ? undefined : JSON.parse(text);
      calls.push({ method: req.method ?? '', path: req.url ?? '', body });
      route(req, body, res).catch((e: unknown) => send(res, 500, { detail: String(e) }));
    });
  });

  return {
    url,
    key,
    revokedGrants,
    stepups,
    calls,
    used,
    overrides,
    count: (method, prefix) => calls.filter((c) => c.method === method && c.path.startsWith(prefix)).length,
    async answer(txn, status) {
      const record = stepups.find((s) => s.txn === txn);
      if (record === undefined) throw new Error(`no step-up ${txn}`);
      record.status = status;
      if (status === 'approved') {
        const claims = JSON.parse(Buffer.from(record.pass.split('.')[1] ?? '', 'base64url').toString()) as ResourcePassClaims;
        const jkt = claims.cnf?.jkt ?? 'none';
        record.token = await signStepupToken(key.privateKey, key.kid, {
          iss: url,
          sub: claims.sub,
          aud: claims.aud,
          user: claims.user,
          act: [record.action],
          type: 'stepup',
          jti: randomBytes(12).toString('base64url'),
          iat: nowSec(),
          exp: nowSec() + 60,
          cnf: { dpop: jkt, jkt },
          details_digest: record.details.digest,
        });
      }
      wake();
    },
    close: () =>
      new Promise<void>((resolve) => {
        wake();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An app's agent: with a DPoP key (for bound passes) or without (bearer passes). */
export type App = StubAgent & { clientId: string; grantId: string; userId: string };

export async function newApp(): Promise<App> {
  return { ...(await stubAgent()), clientId: 'https://app.example/client.json', grantId: `gr_${randomBytes(6).toString('hex')}`, userId: `u_${randomBytes(6).toString('hex')}` };
}

/** A resource pass signed by the stand-in; `bound` adds `cnf.jkt` of the app's key. */
export function passFor(s: StandIn, app: App, o: { resource: string; scopes: string[]; bound: boolean; exp?: number; revSeq?: number }): Promise<string> {
  const now = nowSec();
  const claims: ResourcePassClaims = {
    iss: s.url,
    sub: app.id,
    aud: o.resource,
    user: app.userId,
    scope: o.scopes,
    client_id: app.clientId,
    type: 'access',
    iat: now,
    exp: o.exp ?? now + 600,
    jti: randomBytes(12).toString('base64url'),
    grant: app.grantId,
    rev_seq: o.revSeq ?? 0,
    ...(o.bound ? { cnf: { dpop: app.jkt, jkt: app.jkt } } : {}),
  };
  return signResourcePass(s.key.privateKey, s.key.kid, claims);
}

/**
 * A fetch for the MCP SDK client that presents a pass: `Authorization: Bearer <pass>` for a bearer
 * pass, `Authorization: DPoP <pass>` with a fresh proof per request for a bound one (`signer` signs it).
 */
export function passFetch(pass: string, o: { bound: boolean; signer?: App; scheme?: 'Bearer' | 'DPoP' }): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const headers = new Headers(init?.headers);
    headers.set('authorization', `${o.scheme ?? (o.bound ? 'DPoP' : 'Bearer')} ${pass}`);
    if (o.signer !== undefined) {
      headers.set('dpop', await createDpopProof(o.signer.privateKey, o.signer.publicJwk, { htm: init?.method ?? 'GET', htu: url, accessToken: pass }));
    }
    return fetch(input, { ...init, headers });
  };
}
