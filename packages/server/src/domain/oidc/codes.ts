/**
 * Authorization codes: sealed blobs (AES-256-GCM under the OIDC secret, so every node opens them and
 * nobody else can read or make one) carrying everything the token endpoint checks. Each is single
 * use through store.singleUse (of N concurrent redemptions on any nodes exactly one wins) and lives
 * 60 s. The sign-in a code creates has a `sid` derived from the code's id, so a replayed code can
 * end what the first redemption issued.
 */
import { randomBytes } from 'node:crypto';
import type { OidcSecret } from '../../crypto/oidc-secret.ts';

const LABEL = 'oidc-code/v1';
export const CODE_NAMESPACE = 'oidc-code';

export interface CodeData {
  /** The code's own id (also the single-use key). */
  jti: string;
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  nonce: string | null;
  agentId: string;
  userId: string;
  grantId: string;
  site: string;
  scopes: string[];
  /** Epoch seconds. */
  authTime: number;
  amr: string[];
  /** Epoch milliseconds. */
  expiresAt: number;
  /** `dpop_jkt` of the authorize request: the token request must carry a proof of that key. */
  dpopJkt: string | null;
  /**
   * The protected resource (RFC 8707) a person's browser asked for (decisions §28): the token endpoint
   * then issues a resource pass whose `aud` is exactly this URL. Null for agents' OIDC sign-ins.
   */
  resource: string | null;
}

export const newCodeId = (): string => randomBytes(16).toString('base64url');

export const mintCode = (secret: OidcSecret, data: CodeData): string => secret.seal(LABEL, data);

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

export function openCode(secret: OidcSecret, code: string): CodeData | undefined {
  const v = secret.open(LABEL, code) as Partial<CodeData> | undefined;
  if (!v || typeof v !== 'object') return undefined;
  const strings = [v.jti, v.clientId, v.redirectUri, v.codeChallenge, v.agentId, v.userId, v.grantId, v.site];
  if (!strings.every((s) => typeof s === 'string') || !isStrings(v.scopes) || !isStrings(v.amr)) return undefined;
  if (typeof v.authTime !== 'number' || typeof v.expiresAt !== 'number' || (v.nonce !== null && typeof v.nonce !== 'string')) return undefined;
  if (v.dpopJkt !== null && typeof v.dpopJkt !== 'string') return undefined;
  // Codes sealed before the field existed carry none: they are for agents' sign-ins.
  if (v.resource === undefined) v.resource = null;
  if (v.resource !== null && typeof v.resource !== 'string') return undefined;
  return v as CodeData;
}

/** The sid of the sign-in a code creates. */
export const sidOfCode = (secret: OidcSecret, jti: string): string => secret.derive('sid', jti);
