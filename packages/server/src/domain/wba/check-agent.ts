/**
 * POST /api/v1/check-agent (decisions §22): is a pasted request signed by a Web Bot Auth agent, or
 * what does an agent's key directory list? The agent's own directory is read from the store when
 * the address is one of this service's; any other is fetched through the outbound guard (§24).
 */
import {
  HttpSignatureError, WBA_DIRECTORY_PATH, WBA_REQUEST_TAG, ed25519Thumbprint, fieldComponentValue, parseEd25519PublicJwk,
  readSignatureAgent, readSignatures, signatureBase, verifyEd25519, type CoveredComponent, type Ed25519PublicJwk, type HttpSignature,
} from '@mandate/protocol';
import { type Clock, seconds } from '../../clock.ts';
import { OutboundError, type OutboundFetch, type OutboundPolicy } from '../../outbound/types.ts';
import { checkOutboundUrl } from '../../outbound/url-policy.ts';
import { checkClient } from '../client-limit.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { badRequest } from '../errors.ts';
import { CREATED_SKEW_SEC, type WebBotAuth } from './web-bot-auth.ts';
import { type RawRequest, parseRawRequest } from './raw-request.ts';

export const CHECK_AGENT_LIMIT = { perAddress: 30, windowSec: 600 } as const;
export const CHECK_AGENT_REQUEST_MAX_BYTES = 16 * 1024;
/** At most this many keys of a foreign directory are read. */
const MAX_KEYS = 32;

export type CheckOutcome = 'verified' | 'invalid' | 'unverified' | 'unsigned' | 'found';

export interface CheckResult {
  outcome: CheckOutcome;
  /** The agent's address (its `Signature-Agent`, or the address checked), or null. */
  agent: string | null;
  /** Whether that address is one of this service's agents. */
  ours: boolean;
  /** RFC 7638 thumbprints of the Ed25519 keys its directory lists. */
  keys: string[];
  detail: string;
}

export interface CheckAgentDeps {
  wba: WebBotAuth;
  clock: Clock;
  limiter: RateLimiter;
  fetch: OutboundFetch;
  policy: OutboundPolicy;
}

type Directory = { ok: true; keys: Ed25519PublicJwk[] } | { ok: false; why: string };

export class AgentChecks {
  constructor(private readonly d: CheckAgentDeps) {}

  async check(input: { request?: string | undefined; address?: string | undefined }, clientAddress: string): Promise<CheckResult> {
    if ((input.request === undefined) === (input.address === undefined)) throw badRequest('send exactly one of request (a pasted HTTP request) or address (an agent\'s Signature-Agent address)');
    if (input.request !== undefined && Buffer.byteLength(input.request) > CHECK_AGENT_REQUEST_MAX_BYTES) {
      throw badRequest(`request: at most ${CHECK_AGENT_REQUEST_MAX_BYTES} bytes (the request line and headers are enough)`);
    }
    await checkClient(this.d.limiter, 'check-agent', clientAddress, CHECK_AGENT_LIMIT);
    return input.request !== undefined ? this.checkRequest(parseRawRequest(input.request)) : this.checkAddress(input.address as string);
  }

  private async checkAddress(address: string): Promise<CheckResult> {
    const ours = this.d.wba.labelOfAddress(address) !== undefined;
    const dir = await this.directory(address);
    if (!dir.ok) return { outcome: 'unverified', agent: address, ours, keys: [], detail: dir.why };
    const keys = dir.keys.map(ed25519Thumbprint);
    const detail = keys.length === 0 ? 'the directory lists no keys (for an agent of this service: no key published yet, or the agent was removed or revoked)' : `the directory lists ${keys.length} Ed25519 key${keys.length === 1 ? '' : 's'}`;
    return { outcome: 'found', agent: address, ours, keys, detail };
  }

  private async checkRequest(req: RawRequest): Promise<CheckResult> {
    const input = req.headers.get('signature-input');
    const signature = req.headers.get('signature');
    const rawAgent = req.headers.get('signature-agent');
    if (input === undefined || signature === undefined) {
      return { outcome: 'unsigned', agent: null, ours: false, keys: [], detail: 'the request has no Signature-Input and Signature: it is not signed' };
    }
    let sig: HttpSignature | undefined;
    try {
      const sigs = readSignatures(input, signature);
      sig = sigs.find((s) => s.params.tag === WBA_REQUEST_TAG);
    } catch (e) {
      if (!(e instanceof HttpSignatureError)) throw e;
      return { outcome: 'invalid', agent: null, ours: false, keys: [], detail: e.message };
    }
    if (sig === undefined) return { outcome: 'invalid', agent: null, ours: false, keys: [], detail: `no signature has tag "${WBA_REQUEST_TAG}"` };
    const agent = readSignatureAgent(rawAgent, sig.label) ?? null;
    const ours = agent !== null && this.d.wba.labelOfAddress(agent) !== undefined;
    const result = (outcome: CheckOutcome, keys: string[], detail: string): CheckResult => ({ outcome, agent, ours, keys, detail });
    if (agent === null) {
      const why = rawAgent === undefined ? 'the request has no Signature-Agent' : `Signature-Agent names no address for the signature labelled ${sig.label}`;
      return result('unverified', [], `${why}, so its key cannot be looked up`);
    }
    const dir = await this.directory(agent);
    if (!dir.ok) return result('unverified', [], dir.why);
    const keys = dir.keys.map(ed25519Thumbprint);
    const key = dir.keys.find((k, i) => keys[i] === sig.params.keyid);
    if (key === undefined) return result('unverified', keys, `the signature's keyid is not among the keys of the agent's directory`);
    const problem = this.signatureProblem(sig, req, key);
    if (problem !== null) return result('invalid', keys, problem);
    return result('verified', keys, `signed by key ${sig.params.keyid} of the agent's directory; covers @authority ${req.authority} and Signature-Agent`);
  }

  private signatureProblem(sig: HttpSignature, req: RawRequest, key: Ed25519PublicJwk): string | null {
    const now = seconds(this.d.clock.now());
    const p = sig.params;
    if (p.created === undefined || p.expires === undefined) return 'the signature needs created and expires';
    if (p.expires <= now) return 'the signature has expired';
    if (p.created > now + CREATED_SKEW_SEC) return 'the signature\'s created is in the future';
    if (p.alg !== undefined && p.alg !== 'ed25519') return 'the signature\'s alg must be ed25519';
    const names = sig.components.map((c) => c.name);
    if (!names.includes('@authority')) return 'the signature does not cover @authority';
    if (!names.includes('signature-agent')) return 'the signature does not cover Signature-Agent, so the agent address could be swapped';
    let base: string;
    try {
      base = signatureBase(sig, (c) => this.componentValue(c, req));
    } catch (e) {
      if (e instanceof HttpSignatureError) return e.message;
      throw e;
    }
    return verifyEd25519(base, sig.signature, key) ? null : 'the signature does not verify with the key the agent\'s directory lists';
  }

  private componentValue(c: CoveredComponent, req: RawRequest): string | undefined {
    if (!c.name.startsWith('@')) {
      const raw = req.headers.get(c.name);
      return raw === undefined ? undefined : fieldComponentValue(raw, c.params);
    }
    if (c.params.size > 0) return undefined;
    let url: URL;
    try {
      url = new URL(req.target, `https://${req.authority}`);
    } catch {
      return undefined;
    }
    switch (c.name) {
      case '@authority': return req.authority;
      case '@method': return req.method;
      case '@path': return url.pathname;
      case '@query': return url.search === '' ? '?' : url.search;
      case '@target-uri': return url.href;
      case '@scheme': return url.protocol.slice(0, -1);
      case '@request-target': return req.target;
      default: return undefined;
    }
  }

  /** The Ed25519 keys at `address`: ours from the store, others fetched through the outbound guard. */
  private async directory(address: string): Promise<Directory> {
    const label = this.d.wba.labelOfAddress(address);
    if (label !== undefined) {
      const key = await this.d.wba.liveKey(label);
      return { ok: true, keys: key === undefined ? [] : [{ kty: 'OKP', crv: 'Ed25519', x: key.x }] };
    }
    const refused = checkOutboundUrl(address, this.d.policy, 'the agent address');
    if (refused !== null) return { ok: false, why: refused.message };
    const url = new URL(address);
    if (url.pathname === '/' || url.pathname === '') url.pathname = WBA_DIRECTORY_PATH;
    let res;
    try {
      res = await this.d.fetch(url.href, { method: 'GET', headers: { accept: 'application/http-message-signatures-directory+json, application/json' } });
    } catch (e) {
      if (e instanceof OutboundError) return { ok: false, why: `the agent's directory could not be fetched: ${e.message}` };
      throw e;
    }
    if (res.status >= 300 && res.status < 400) return { ok: false, why: `the agent's directory answered a redirect (${res.status}); redirects are not followed` };
    if (res.status !== 200) return { ok: false, why: `the agent's directory answered HTTP ${res.status}` };
    let doc: unknown;
    try {
      doc = JSON.parse(res.body.toString('utf8'));
    } catch {
      return { ok: false, why: 'the agent\'s directory is not JSON' };
    }
    const list = (doc as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(list)) return { ok: false, why: 'the agent\'s directory has no "keys" list' };
    const keys: Ed25519PublicJwk[] = [];
    for (const k of list.slice(0, MAX_KEYS)) {
      try {
        keys.push(parseEd25519PublicJwk(k));
      } catch {
        // Keys of other types (RSA-PSS ...) are skipped: only Ed25519 is checked here.
      }
    }
    return { ok: true, keys };
  }
}
