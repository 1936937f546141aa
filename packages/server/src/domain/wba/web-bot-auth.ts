/**
 * Web Bot Auth keys and directories (decisions §22): an agent publishes one Ed25519 public key; the
 * service serves it in a key directory at the agent's address, with the directory response
 * signature the agent made (the service never holds the private key, so it cannot sign for it).
 */
import { createHash } from 'node:crypto';
import {
  JwkError, WBA_DIRECTORY_MAX_LIFETIME_SEC, WBA_DIRECTORY_PATH, WBA_DIRECTORY_TAG, HttpSignatureError, contentDigestMatches, directoryBody,
  ed25519Thumbprint, parseEd25519PublicJwk, readSignatures, signatureBase, verifyEd25519, type Ed25519PublicJwk,
} from '@mandate/protocol';
import type { AgentRecord, Store, WbaKeyRecord } from '../../store/ports/index.ts';
import { type Clock, seconds } from '../../clock.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { badRequest, conflict } from '../errors.ts';
import { isAgentBlocked } from '../agents/blocked.ts';

export const WBA_KEYS_PER_HOUR = 30;
export const WBA_PROOFS_PER_HOUR = 120;
/** How long caches may keep a directory (decisions §22). */
export const DIRECTORY_MAX_AGE_SEC = 300;
/** Clock skew allowed on a signature's `created`. */
export const CREATED_SKEW_SEC = 60;
export const EMPTY_DIRECTORY = '{"keys":[]}';
const LABEL = /^a-[0-9a-f]{12}$/;

export interface WbaDeps {
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
  baseUrl: string;
  /** WBA_AGENT_DOMAIN, or null. */
  agentDomain: string | null;
}

export interface WbaKeyAnswer {
  signature_agent: string;
  host: string;
  directory: string;
}

export interface ServedDirectory {
  body: string;
  /** The agent's proof headers, present only with its keys. */
  headers: Record<string, string>;
}

export interface ProofHeaders {
  'Content-Digest': string;
  'Signature-Input': string;
  Signature: string;
}

/** The agent's address label: derived from its id, so the same across key changes and re-registrations. */
export function wbaLabel(agentId: string): string {
  return `a-${createHash('sha256').update(`mandate-wba-label:${agentId}`).digest('hex').slice(0, 12)}`;
}

export class WebBotAuth {
  constructor(private readonly d: WbaDeps) {}

  /** The `Signature-Agent` address of `label` (decisions §22). */
  address(label: string): string {
    return this.d.agentDomain !== null ? `https://${label}.${this.d.agentDomain}` : `${this.d.baseUrl}/wba/${label}`;
  }

  /** The directory's `@authority` (what the directory signature covers with `;req`). */
  authority(label: string): string {
    return this.d.agentDomain !== null ? `${label}.${this.d.agentDomain}` : new URL(this.d.baseUrl).host.toLowerCase();
  }

  /** The label of one of this service's agent addresses, or undefined when `address` is not ours. */
  labelOfAddress(address: string): string | undefined {
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      return undefined;
    }
    if (url.search !== '' || url.hash !== '') return undefined;
    if (this.d.agentDomain !== null && url.protocol === 'https:' && url.port === '') {
      const [label, ...rest] = url.hostname.toLowerCase().split('.');
      if (label !== undefined && LABEL.test(label) && rest.join('.') === this.d.agentDomain && ['/', WBA_DIRECTORY_PATH].includes(url.pathname)) return label;
    }
    const base = new URL(this.d.baseUrl);
    if (url.origin !== base.origin) return undefined;
    const prefix = `${base.pathname.replace(/\/+$/, '')}/wba/`;
    if (!url.pathname.startsWith(prefix)) return undefined;
    const rest = url.pathname.slice(prefix.length);
    const label = rest.slice(0, 14);
    if (!LABEL.test(label) || !['', '/', WBA_DIRECTORY_PATH].includes(rest.slice(14))) return undefined;
    return label;
  }

  /** The label of a Host header (`a-<12 hex>.<WBA_AGENT_DOMAIN>`), or undefined. */
  labelOfHost(host: string): string | undefined {
    if (this.d.agentDomain === null) return undefined;
    const name = host.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
    const dot = name.indexOf('.');
    const label = name.slice(0, dot);
    return dot > 0 && LABEL.test(label) && name.slice(dot + 1) === this.d.agentDomain ? label : undefined;
  }

  /** POST /api/v1/wba/key: publishes or replaces the agent's key; 409 when another agent has it. */
  async setKey(agent: AgentRecord, jwk: unknown): Promise<WbaKeyAnswer> {
    let key: Ed25519PublicJwk;
    try {
      key = parseEd25519PublicJwk(jwk);
    } catch (e) {
      if (e instanceof JwkError) throw badRequest(`jwk: ${e.message}`);
      throw e;
    }
    await this.d.limiter.check(`wba-key:${agent.id}`, WBA_KEYS_PER_HOUR, 3600);
    const label = wbaLabel(agent.id);
    const kid = ed25519Thumbprint(key);
    const outcome = await this.d.store.wbaKeys.put({ agentId: agent.id, userId: agent.userId, label, kid, x: key.x }, this.d.clock.now());
    if (outcome === 'taken') throw conflict('this key is registered to another agent; generate a new Ed25519 key for this agent');
    return { signature_agent: this.address(label), host: this.authority(label), directory: directoryBody([key]) };
  }

  /**
   * POST /api/v1/wba/proof: checks the directory response signature the agent made (tag
   * `http-message-signatures-directory`, covering `@authority`;req and `content-digest`, at most
   * 3600 s long, not expired) with its current key, then serves it with the directory.
   */
  async setProof(agent: AgentRecord, headers: ProofHeaders): Promise<{ expires_at: number }> {
    await this.d.limiter.check(`wba-proof:${agent.id}`, WBA_PROOFS_PER_HOUR, 3600);
    const current = await this.d.store.wbaKeys.byAgent(agent.id);
    if (current === undefined) throw badRequest('no key yet: publish the key with POST /api/v1/wba/key first');
    const body = directoryBody([{ kty: 'OKP', crv: 'Ed25519', x: current.x }]);
    if (!contentDigestMatches(headers['Content-Digest'], body)) throw badRequest('Content-Digest must be the sha-256 digest of the directory bytes that POST /api/v1/wba/key answered');
    let sigs;
    try {
      sigs = readSignatures(headers['Signature-Input'], headers.Signature);
    } catch (e) {
      if (e instanceof HttpSignatureError) throw badRequest(e.message);
      throw e;
    }
    if (sigs.length !== 1) throw badRequest('send exactly one signature (one label in Signature-Input and Signature)');
    const [sig] = sigs as [(typeof sigs)[number]];
    const p = sig.params;
    if (p.tag !== WBA_DIRECTORY_TAG) throw badRequest(`the signature's tag must be "${WBA_DIRECTORY_TAG}"`);
    if (p.keyid !== current.kid) throw badRequest('the signature\'s keyid must be the key\'s thumbprint (the kid in the directory)');
    if (p.alg !== undefined && p.alg !== 'ed25519') throw badRequest('the signature\'s alg must be ed25519');
    if (p.created === undefined || p.expires === undefined) throw badRequest('the signature needs created and expires');
    const now = seconds(this.d.clock.now());
    if (p.expires - p.created > WBA_DIRECTORY_MAX_LIFETIME_SEC) throw badRequest(`expires may be at most ${WBA_DIRECTORY_MAX_LIFETIME_SEC} s after created`);
    if (p.expires <= p.created) throw badRequest('expires must be after created');
    if (p.expires <= now) throw badRequest('the signature has expired');
    if (p.created > now + CREATED_SKEW_SEC) throw badRequest('created is in the future');
    const ids = sig.components.map((c) => `${c.name}${[...c.params.keys()].map((k) => `;${k}`).join('')}`).sort();
    if (ids.join(' ') !== '@authority;req content-digest') throw badRequest('the signature must cover exactly "@authority";req and "content-digest"');
    const base = signatureBase(sig, (c) => (c.name === '@authority' ? this.authority(current.label) : headers['Content-Digest']));
    if (!verifyEd25519(base, sig.signature, { kty: 'OKP', crv: 'Ed25519', x: current.x })) {
      throw badRequest(`the signature does not verify with the agent's key over @authority ${this.authority(current.label)} and the directory's Content-Digest`);
    }
    const stored = await this.d.store.wbaKeys.setProof(agent.id, current.kid, {
      contentDigest: headers['Content-Digest'].trim(),
      signatureInput: headers['Signature-Input'].trim(),
      signature: headers.Signature.trim(),
      expiresAt: p.expires * 1000,
    });
    if (!stored) throw conflict('the agent\'s key changed meanwhile; sign the new directory');
    return { expires_at: p.expires };
  }

  /** The keys the agent's directory lists now: none while it has no proof, or is removed, revoked or blocked. */
  async liveKey(label: string): Promise<WbaKeyRecord | undefined> {
    if (!LABEL.test(label)) return undefined;
    const key = await this.d.store.wbaKeys.byLabel(label);
    if (key === undefined || key.proof === null) return undefined;
    const agent = await this.d.store.agents.byId(key.agentId);
    if (agent === undefined || isAgentBlocked(agent)) return undefined;
    return key;
  }

  /** The directory served at the agent's address. */
  async directory(label: string): Promise<ServedDirectory> {
    const key = await this.liveKey(label);
    if (key === undefined || key.proof === null) return { body: EMPTY_DIRECTORY, headers: {} };
    return {
      body: directoryBody([{ kty: 'OKP', crv: 'Ed25519', x: key.x }]),
      headers: { 'content-digest': key.proof.contentDigest, 'signature-input': key.proof.signatureInput, signature: key.proof.signature },
    };
  }
}
