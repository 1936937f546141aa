import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type RevocationClaims,
  type RevocationDeltaClaims,
  type RevocationEntries,
  type RevokedAgent,
  signRevocationDelta,
  signRevocationSnapshot,
} from '@mandate/protocol';
import { type ServiceKey, serviceKey } from './stub-service.ts';

/**
 * A stand-in for Mandate's revocation endpoints including the event stream (decisions §30):
 * `GET /api/v1/jwks`, `GET /api/v1/revocation` (the current list, signed) and
 * `GET /api/v1/revocation/events` (Server-Sent Events: `snapshot`, then `delta`s; `Last-Event-ID`
 * resumes with the deltas since then, or a snapshot when they are not held). The test changes the
 * list (each change is pushed to open streams as a signed delta), sends keep-alives, ends streams,
 * turns the stream off (404) and pushes deltas of its own making (gaps, bad signatures). Every stream
 * opened is recorded with the Last-Event-ID it came with.
 */

const none = (): RevocationEntries => ({ revoked_agents: [], revoked_grants: [] });

export type StandIn = {
  url: string;
  key: ServiceKey;
  /** The list as it is now. */
  list: RevocationClaims;
  /** What the events path answers: 200 (the stream) or anything else (e.g. 404, as a service without it). */
  eventsStatus: number;
  /** The Retry-After sent with a status other than 200 (as a node at its maximum of streams sends with its 503); none when undefined. */
  eventsRetryAfter: string | undefined;
  /** Every stream opened (or refused), in order, with the Date.now() of its arrival. */
  connections: { lastEventId: string | undefined; at: number }[];
  /** How many times `GET /api/v1/revocation` was asked. */
  snapshotGets: number;
  /** Streams open now. */
  open(): number;
  /** Revokes an agent: the list changes and the delta goes to every open stream. */
  revoke(agentId: string): Promise<void>;
  /** Lifts an agent's revocation (a `removed` delta). */
  unrevoke(agentId: string): Promise<void>;
  /** Changes the list without telling the open streams (a change they missed). */
  revokeSilently(agentId: string): Promise<RevocationDeltaClaims>;
  /** Sends a delta JWT of the test's making to every open stream. */
  sendRaw(jwt: string): void;
  sign(delta: RevocationDeltaClaims, key?: ServiceKey): Promise<string>;
  keepAlive(): void;
  /** Ends every open stream (as a restarting node would). */
  endStreams(): void;
  close(): Promise<void>;
};

export async function startStandIn(o: { nowSec: () => number }): Promise<StandIn> {
  const key = await serviceKey('k1');
  const streams = new Set<ServerResponse>();
  /** Signed deltas by the rev_seq they follow: what a resume replays. */
  const deltas = new Map<number, string>();
  let url = '';

  const snapshotBody = async () => ({
    // Signed now, as the service re-signs its list (at most once a second): a poll refreshes what is held.
    signature: await signRevocationSnapshot(key.privateKey, key.kid, { ...s.list, iat: o.nowSec() }),
    rev_seq: s.list.rev_seq,
    revoked_agents: s.list.revoked_agents,
    revoked_grants: s.list.revoked_grants,
  });
  const write = (res: ServerResponse, text: string) => res.write(text);

  async function change(added: RevokedAgent[], removed: RevokedAgent[]): Promise<RevocationDeltaClaims> {
    const prev = s.list.rev_seq;
    const seq = prev + 1;
    const delta: RevocationDeltaClaims = {
      type: 'revocation-delta',
      iss: url,
      iat: o.nowSec(),
      rev_seq: seq,
      prev_seq: prev,
      added: { ...none(), revoked_agents: added.map((a) => ({ ...a, rev_seq: seq })) },
      removed: { ...none(), revoked_agents: removed },
    };
    const gone = new Set(removed.map((a) => a.id));
    s.list = {
      ...s.list,
      iat: o.nowSec(),
      rev_seq: seq,
      revoked_agents: [...s.list.revoked_agents.filter((a) => !gone.has(a.id)), ...delta.added.revoked_agents],
    };
    deltas.set(prev, await s.sign(delta));
    return delta;
  }
  const push = (seq: number, jwt: string) => {
    for (const res of streams) write(res, `event: delta\nid: ${seq}\ndata: ${jwt}\n\n`);
  };

  async function events(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const header = req.headers['last-event-id'];
    const lastEventId = typeof header === 'string' ? header : undefined;
    s.connections.push({ lastEventId, at: Date.now() });
    if (s.eventsStatus !== 200) {
      res.writeHead(s.eventsStatus, { 'content-type': 'application/json', ...(s.eventsRetryAfter === undefined ? {} : { 'retry-after': s.eventsRetryAfter }) });
      res.end(JSON.stringify({ detail: s.eventsStatus === 503 ? 'this node holds its maximum of revocation event streams' : 'not found' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    res.flushHeaders();
    streams.add(res);
    res.on('close', () => streams.delete(res));
    // Resume: every delta since the id when all are held, else a snapshot.
    const from = lastEventId === undefined ? NaN : Number(lastEventId);
    const replay: [number, string][] = [];
    for (let seq = from; Number.isInteger(seq) && seq < s.list.rev_seq; seq++) {
      const jwt = deltas.get(seq);
      if (jwt === undefined) break;
      replay.push([seq + 1, jwt]);
    }
    if (Number.isInteger(from) && from <= s.list.rev_seq && replay.length === s.list.rev_seq - from) {
      for (const [seq, jwt] of replay) write(res, `event: delta\nid: ${seq}\ndata: ${jwt}\n\n`);
    } else {
      write(res, `event: snapshot\nid: ${s.list.rev_seq}\ndata: ${JSON.stringify(await snapshotBody())}\n\n`);
    }
  }

  const server: Server = createServer((req, res) => {
    const path = req.url ?? '';
    if (path === '/api/v1/jwks') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: [key.publicJwk] }));
    } else if (path === '/api/v1/revocation') {
      s.snapshotGets++;
      void snapshotBody().then((body) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      });
    } else if (path === '/api/v1/revocation/events') {
      void events(req, res);
    } else {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: 'not found' }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const s: StandIn = {
    url,
    key,
    list: { type: 'revocation', iss: url, iat: o.nowSec(), rev_seq: 1, revoked_agents: [], revoked_grants: [] },
    eventsStatus: 200,
    eventsRetryAfter: undefined,
    connections: [],
    snapshotGets: 0,
    open: () => streams.size,
    async revoke(agentId) {
      const d = await change([{ id: agentId, flag: 'revoked', rev_seq: 0 }], []);
      push(d.rev_seq, deltas.get(d.prev_seq) as string);
    },
    async unrevoke(agentId) {
      const held = s.list.revoked_agents.filter((a) => a.id === agentId);
      const d = await change([], held);
      push(d.rev_seq, deltas.get(d.prev_seq) as string);
    },
    revokeSilently: (agentId) => change([{ id: agentId, flag: 'revoked', rev_seq: 0 }], []),
    sendRaw(jwt) {
      for (const res of streams) write(res, `event: delta\ndata: ${jwt}\n\n`);
    },
    sign: (delta, k = key) => signRevocationDelta(k.privateKey, key.kid, delta),
    keepAlive() {
      for (const res of streams) write(res, ': keep-alive\n\n');
    },
    endStreams() {
      for (const res of streams) res.end();
      streams.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of streams) res.end();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return s;
}
