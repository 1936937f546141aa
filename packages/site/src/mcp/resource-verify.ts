import { decodeJwt } from 'jose';
import { ProtocolError, type ResourceTokenScheme, isVerifyErrorCode, verifyResourceRequest } from '@mandate/protocol';
import { LocalStrategy } from '../local/local-strategy.ts';
import type { ReplayCache } from '../local/replay-cache.ts';
import { verifiedProofIat } from '../local/replay-proof.ts';
import { ServiceUnavailableError, callService, isRecord, isStringArray, isStringRecord } from '../service-client.ts';
import type { McpConfig } from './options.ts';

/** One request to the MCP server, as far as its pass goes. */
export type ResourceRequest = {
  accessToken: string;
  scheme: ResourceTokenScheme;
  /** The `DPoP` header, when exactly one was sent. */
  dpop: string | undefined;
  method: string;
  /** The public URL of the request (the proof's `htu`). */
  url: string;
};

/** A verified resource pass: who acts (an app's agent), for whom, with which scopes. */
export type ResourceVerified = {
  agentId: string;
  /** Cloud mode only (a pass carries no name). */
  agentName?: string;
  userId: string;
  clientId: string;
  scopes: string[];
  userInfo: Record<string, string>;
  grantId: string;
  /** Unix seconds. */
  expiresAt: number;
  /** True when the pass is bound to a DPoP key (and came with a proof by it). */
  bound: boolean;
};

/**
 * Verification of resource passes, in either mode. `verify` resolves or throws: ProtocolError for a
 * verdict about the request (401), anything else for "no verdict" (503), as the site verifier does.
 */
export interface ResourceVerifier {
  verify(r: ResourceRequest): Promise<ResourceVerified>;
  start(): Promise<void>;
  refresh(): Promise<void>;
  close(): void;
  /** Local mode: keys held and a revocation list within max_stale. Cloud mode: true. */
  ready(): boolean;
}

const BEFORE_HORIZON = 'this client sent more DPoP proofs than its share of the replay cache: sign a new proof';

/**
 * Local mode: `verifyResourceRequest` with the site verifier's machinery (LocalStrategy's keys and
 * revocation polling, the same replay cache). A revoked app or access is listed with site = the
 * resource URL, which is the pass's `aud`, so the revocation index answers for resource passes as is.
 */
export class LocalResourceVerifier implements ResourceVerifier {
  private readonly local: LocalStrategy;

  constructor(
    private readonly config: McpConfig,
    private readonly replay: ReplayCache,
  ) {
    this.local = new LocalStrategy(config.verifier, replay);
  }

  async verify(r: ResourceRequest): Promise<ResourceVerified> {
    const index = await this.local.revocationIndex();
    const { verifier } = this.config;
    const now = Math.floor(verifier.now() / 1000);
    let agentId: string | undefined;
    const { claims, proof } = await verifyResourceRequest({
      accessToken: r.accessToken,
      scheme: r.scheme,
      ...(r.dpop === undefined ? {} : { dpop: r.dpop }),
      method: r.method,
      url: r.url,
      keys: this.local.keys.resolve,
      issuer: verifier.issuer,
      now,
      resource: this.config.resource,
      isRevoked: async (c) => {
        agentId = c.sub;
        return index.verdict(c);
      },
      consumeJti: async (jti, expiresAtSec) => {
        if (agentId === undefined || r.dpop === undefined) throw new Error('the replay cache was reached before the pass was checked');
        const fresh = await this.replay.consume(jti, expiresAtSec, now, { agentId, iat: verifiedProofIat(r.dpop) });
        if (fresh === 'before_horizon') throw new ProtocolError('dpop_replay', BEFORE_HORIZON);
        return fresh;
      },
    });
    return {
      agentId: claims.sub,
      userId: claims.user,
      clientId: claims.client_id,
      scopes: claims.scope,
      userInfo: claims.user_info ?? {},
      grantId: claims.grant,
      expiresAt: claims.exp,
      bound: proof !== null,
    };
  }

  start = (): Promise<void> => this.local.start();
  refresh = (): Promise<void> => this.local.refresh();
  close = (): void => this.local.close();
  ready = (): boolean => this.local.keys.loaded && this.local.revocation.fresh() !== undefined;
}

/** The pass's grant and expiry: Mandate has just verified its signature, so the payload is authentic. */
function passFacts(accessToken: string): { grantId: string; expiresAt: number } {
  try {
    const { grant, exp } = decodeJwt(accessToken);
    if (typeof grant === 'string' && typeof exp === 'number') return { grantId: grant, expiresAt: exp };
  } catch {
    // falls through: a pass Mandate accepted always decodes
  }
  throw new ServiceUnavailableError('POST /api/v1/verify accepted a pass without grant or exp');
}

/**
 * Cloud mode: `POST /api/v1/verify` with `resource` (and the scheme the pass came with), so Mandate
 * checks `aud`, the binding, the proof, its jti and revocation. Anything off-contract is no verdict.
 */
export class CloudResourceVerifier implements ResourceVerifier {
  constructor(private readonly config: McpConfig) {}

  async verify(r: ResourceRequest): Promise<ResourceVerified> {
    const res = await callService(this.config.verifier, '/api/v1/verify', {
      method: 'POST',
      body: {
        access_token: r.accessToken,
        ...(r.dpop === undefined ? {} : { dpop: r.dpop }),
        method: r.method,
        url: r.url,
        resource: this.config.resource,
        token_type: r.scheme,
      },
    });
    if (res.status !== 200 || !isRecord(res.body)) throw new ServiceUnavailableError(`POST /api/v1/verify answered ${res.status}`);
    const b = res.body;
    if (b['valid'] === false) {
      const error = b['error'];
      if (!isVerifyErrorCode(error)) throw new ServiceUnavailableError('POST /api/v1/verify: the answer has an unknown error code');
      const description = b['error_description'];
      throw new ProtocolError(error, typeof description === 'string' ? description : undefined);
    }
    const { valid, agent_id, agent_name, user_id, scopes, user_info, client_id, resource } = b;
    if (
      valid !== true ||
      typeof agent_id !== 'string' ||
      typeof user_id !== 'string' ||
      typeof client_id !== 'string' ||
      resource !== this.config.resource ||
      !isStringArray(scopes) ||
      (user_info !== undefined && !isStringRecord(user_info))
    ) {
      throw new ServiceUnavailableError('POST /api/v1/verify: the answer does not match the contract');
    }
    return {
      agentId: agent_id,
      ...(typeof agent_name === 'string' ? { agentName: agent_name } : {}),
      userId: user_id,
      clientId: client_id,
      scopes,
      userInfo: user_info ?? {},
      ...passFacts(r.accessToken),
      bound: decodeJwt(r.accessToken)['cnf'] !== undefined,
    };
  }

  start = async (): Promise<void> => {};
  refresh = async (): Promise<void> => {};
  close = (): void => {};
  ready = (): boolean => true;
}
