import { WBA_DIRECTORY_MAX_LIFETIME_SEC, authorityOf, signDirectory, signRequest } from '@mandate/protocol';
import type { ServiceClient } from './client/http.ts';
import type { Clock } from './clock.ts';
import { WbaKey } from './keys/wba-key.ts';

/** How long a request signature lives: long enough for a slow network, short against replay. */
export const WBA_REQUEST_LIFETIME_SEC = 60;
/** A directory signature is renewed when less than this is left of it. */
export const WBA_PROOF_RENEW_MARGIN_SEC = 600;

export type WbaSetup = { signatureAgent: string; host: string; keyid: string; expiresAt: number };

/**
 * Web Bot Auth for one agent (decisions §22): publishes its Ed25519 key with the service
 * (`POST /api/v1/wba/key`), signs the directory the service serves for it and uploads that
 * signature (`POST /api/v1/wba/proof`), renews it before it expires, and signs requests to sites.
 */
export class WebBotAuth {
  #signatureAgent: string | null;
  #proofExpiresAt = 0;

  constructor(
    readonly key: WbaKey,
    private readonly deps: { client: ServiceClient; clock: Clock; agentId: string; agentJwt: () => Promise<string>; onSetup?: (setup: WbaSetup) => void },
    signatureAgent: string | null = null,
    proofExpiresAt = 0,
  ) {
    this.#signatureAgent = signatureAgent;
    this.#proofExpiresAt = signatureAgent === null ? 0 : proofExpiresAt;
  }

  get signatureAgent(): string | null {
    return this.#signatureAgent;
  }

  /** Publishes the key and uploads a fresh directory signature (`lifetimeSec`, at most 3600). */
  async setup(opts: { lifetimeSec?: number; signal?: AbortSignal } = {}): Promise<WbaSetup> {
    const lifetimeSec = Math.min(opts.lifetimeSec ?? WBA_DIRECTORY_MAX_LIFETIME_SEC, WBA_DIRECTORY_MAX_LIFETIME_SEC);
    const reg = await this.deps.client.call<{ signature_agent: string; host: string; directory: string }>('POST', '/api/v1/wba/key', {
      body: { agent_id: this.deps.agentId, agent_jwt: await this.deps.agentJwt(), jwk: this.key.publicJwk },
      signal: opts.signal,
    });
    const created = Math.floor(this.deps.clock.now() / 1000);
    const headers = signDirectory({ authority: reg.host, body: reg.directory, key: this.key, created, lifetimeSec });
    const proof = await this.deps.client.call<{ expires_at: number }>('POST', '/api/v1/wba/proof', {
      body: { agent_id: this.deps.agentId, agent_jwt: await this.deps.agentJwt(), headers },
      signal: opts.signal,
    });
    this.#signatureAgent = reg.signature_agent;
    this.#proofExpiresAt = proof.expires_at;
    const setup = { signatureAgent: reg.signature_agent, host: reg.host, keyid: this.key.keyid, expiresAt: proof.expires_at };
    this.deps.onSetup?.(setup);
    return setup;
  }

  /** Sets up (or renews the directory signature) when it was never done here or expires within ten minutes. */
  async ensureFresh(signal?: AbortSignal): Promise<void> {
    const now = Math.floor(this.deps.clock.now() / 1000);
    if (this.#signatureAgent !== null && this.#proofExpiresAt - now > WBA_PROOF_RENEW_MARGIN_SEC) return;
    await this.setup(signal ? { signal } : {});
  }

  /** `Signature-Agent`, `Signature-Input` and `Signature` for one request to `url` (tag `web-bot-auth`, fresh nonce). */
  headersFor(url: string | URL): Record<string, string> {
    if (this.#signatureAgent === null) throw new Error('Web Bot Auth is not set up: call setupWebBotAuth() first');
    return signRequest({
      authority: authorityOf(new URL(url)),
      signatureAgent: this.#signatureAgent,
      key: this.key,
      created: Math.floor(this.deps.clock.now() / 1000),
      lifetimeSec: WBA_REQUEST_LIFETIME_SEC,
    });
  }
}

export { WbaKey };
