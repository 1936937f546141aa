/**
 * The one outbound guard (decisions §24): every fetch to an address someone else chose goes through
 * here. https: only (http: and loopback too when OUTBOUND_ALLOW_LOOPBACK), public addresses only,
 * judged three times: on the URL text, on every DNS answer, and on the socket once connected (so a
 * DNS answer that changes between the check and the connect cannot slip through). No redirects,
 * one deadline for the whole exchange, a capped body. Built on node:http directly because global
 * fetch offers no hook on the connected socket.
 */
import { lookup as systemLookup } from 'node:dns/promises';
import type { LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import tls from 'node:tls';
import { addressProblem } from './address-policy.ts';
import { checkOutboundUrl } from './url-policy.ts';
import { OutboundError, type OutboundFetch, type OutboundPolicy, type OutboundRequest, type OutboundResponse } from './types.ts';

export const OUTBOUND_TIMEOUT_MS = 5000;
export const OUTBOUND_BODY_CAP = 65536;

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Name resolution; replaceable in tests. Whatever it answers is still judged by the policy. */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

export interface GuardedFetchOptions {
  timeoutMs?: number;
  bodyCap?: number;
  resolveHost?: ResolveHost;
}

const resolveWithSystem: ResolveHost = (hostname) => systemLookup(hostname, { all: true });

/** The check run on the connected socket: `remoteAddress` is undefined once the socket is gone. */
export function connectedAddressProblem(remoteAddress: string | undefined, policy: OutboundPolicy): string | null {
  if (remoteAddress === undefined || remoteAddress === '') return 'the connection has no remote address';
  return addressProblem(remoteAddress, policy);
}

type Judged = { error: OutboundError } | { answers: ResolvedAddress[] };

async function resolveAndJudge(hostname: string, family: number, policy: OutboundPolicy, resolveHost: ResolveHost): Promise<Judged> {
  let answers: ResolvedAddress[];
  try {
    answers = await resolveHost(hostname);
  } catch {
    return { error: new OutboundError('dns', `could not resolve ${hostname}`) };
  }
  // Any bad answer refuses the name: the resolver, not we, would pick which one is used.
  for (const answer of answers) {
    const problem = addressProblem(answer.address, policy);
    if (problem !== null) return { error: new OutboundError('address', `${hostname} resolves to an address that is not allowed: ${problem}`) };
  }
  const usable = family === 4 || family === 6 ? answers.filter((a) => a.family === family) : answers;
  if (usable.length === 0) return { error: new OutboundError('dns', `${hostname} has no usable address`) };
  return { answers: usable };
}

function familyOf(options: LookupOptions): number {
  if (options.family === 'IPv4') return 4;
  if (options.family === 'IPv6') return 6;
  return options.family ?? 0;
}

function guardedLookup(policy: OutboundPolicy, resolveHost: ResolveHost): LookupFunction {
  return (hostname, options, callback) => {
    void resolveAndJudge(hostname, familyOf(options), policy, resolveHost).then((judged) => {
      // Out of the promise chain, so that nothing net does in the callback becomes a rejection.
      process.nextTick(() => {
        if ('error' in judged) return callback(judged.error, '');
        const [first] = judged.answers;
        if (options.all === true || first === undefined) return callback(null, judged.answers);
        return callback(null, first.address, first.family);
      });
    });
  };
}

function joinHeaders(distinct: NodeJS.Dict<string[]>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(distinct)) {
    if (values !== undefined) headers[name] = values.join(', ');
  }
  return headers;
}

/** Node error codes only: messages can quote header values (ERR_HTTP_INVALID_HEADER_VALUE). */
function networkError(where: string, error: unknown): OutboundError {
  if (error instanceof OutboundError) return error;
  const code = error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : 'unknown error';
  return new OutboundError('network', `the request to ${where} failed (${code})`);
}

interface Limits {
  timeoutMs: number;
  bodyCap: number;
  resolveHost: ResolveHost;
}

function exchange(target: URL, request: OutboundRequest, policy: OutboundPolicy, limits: Limits): Promise<OutboundResponse> {
  return new Promise((resolve, reject) => {
    // Only the origin appears in errors: paths and queries of push endpoints carry tokens.
    const where = target.origin;
    const isHttps = target.protocol === 'https:';
    const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
    const defaultPort = isHttps ? 443 : 80;
    const port = target.port === '' ? defaultPort : Number(target.port);
    let settled = false;
    let req: http.ClientRequest | undefined;
    // The guard's own refusal wins over whatever error the destroyed socket reports afterwards.
    let refusal: OutboundError | undefined;
    let answered = false;

    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(deadline);
      return true;
    };
    const fail = (error: OutboundError): void => {
      if (!settle()) return;
      reject(error);
      req?.destroy();
    };
    const deadline = setTimeout(() => fail(new OutboundError('timeout', `${where} did not answer within ${limits.timeoutMs} ms`)), limits.timeoutMs);

    const lookup = guardedLookup(policy, limits.resolveHost);
    const createConnection = (): net.Socket => {
      const socket = isHttps
        ? tls.connect({ host, port, lookup, servername: net.isIP(host) === 0 ? host : undefined })
        : net.connect({ host, port, lookup });
      // Registered before the request writes anything, so it runs before buffered request bytes are
      // flushed on 'connect'. IP literals skip lookup entirely; this is their only runtime check.
      socket.once('connect', () => {
        const problem = connectedAddressProblem(socket.remoteAddress, policy);
        if (problem === null) return;
        refusal = new OutboundError('address', `the connection to ${where} reached an address that is not allowed: ${problem}`);
        socket.destroy(refusal);
      });
      return socket;
    };

    try {
      req = (isHttps ? https : http).request({
        protocol: target.protocol,
        host,
        port,
        defaultPort,
        path: `${target.pathname}${target.search}`,
        method: request.method,
        headers: request.headers ?? {},
        // No agent: a fresh connection per fetch, opened by createConnection so it can be checked.
        createConnection,
      });
    } catch (error) {
      fail(networkError(where, error));
      return;
    }

    req.on('error', (error) => fail(refusal ?? networkError(where, error)));
    req.on('close', () => {
      if (!answered) fail(refusal ?? new OutboundError('network', `${where} closed the connection without answering`));
    });
    req.on('response', (res) => {
      answered = true;
      const tooLarge = (): OutboundError => new OutboundError('too_large', `the response from ${where} is larger than ${limits.bodyCap} bytes`);
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > limits.bodyCap) return fail(tooLarge());
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limits.bodyCap) return fail(tooLarge());
        chunks.push(chunk);
      });
      res.on('end', () => {
        // A 3xx is handed back like any other status: redirects are never followed.
        if (settle()) resolve({ status: res.statusCode ?? 0, headers: joinHeaders(res.headersDistinct), body: Buffer.concat(chunks) });
      });
      res.on('error', (error) => fail(networkError(where, error)));
      res.on('close', () => {
        if (!res.complete) fail(new OutboundError('network', `${where} closed the connection before the response was complete`));
      });
    });
    req.end(request.body);
  });
}

/**
 * The guarded fetch for `policy`. `options` exists for tests (a short deadline, a small cap, a fake
 * resolver); production uses the §24 defaults.
 */
export function guardedFetch(policy: OutboundPolicy, options: GuardedFetchOptions = {}): OutboundFetch {
  const limits: Limits = {
    timeoutMs: options.timeoutMs ?? OUTBOUND_TIMEOUT_MS,
    bodyCap: options.bodyCap ?? OUTBOUND_BODY_CAP,
    resolveHost: options.resolveHost ?? resolveWithSystem,
  };
  return async (url, request) => {
    const problem = checkOutboundUrl(url, policy);
    if (problem !== null) throw new OutboundError(problem.reason, problem.message);
    return exchange(new URL(url), request, policy, limits);
  };
}
