import { parseRevocationClaims } from './claim-shapes.ts';
import type { PassClaims, RevocationClaims } from './claims.ts';
import { REVOCATION_TYP } from './claims.ts';
import { ProtocolError } from './errors.ts';
import type { ServiceKeys } from './keys.ts';
import { verifyServiceToken } from './service-token.ts';

export type VerifyRevocationOptions = {
  keys: ServiceKeys;
  issuer: string;
  /** Unix seconds. */
  now: number;
  /** When given, a snapshot minted longer ago is refused with token_expired (local `max_stale`). */
  maxAgeSec?: number;
};

/** A revocation list can be long; it is fetched from the service, not from an agent. */
const MAX_SNAPSHOT_LENGTH = 8 * 1024 * 1024;

/**
 * Verifies the `signature` JWT of a revocation snapshot and returns its signed content; only
 * that content is to be trusted, never the unsigned fields beside it. Codes: invalid_token,
 * token_expired (older than maxAgeSec).
 */
export async function verifyRevocationSnapshot(
  signatureJwt: unknown,
  o: VerifyRevocationOptions,
): Promise<RevocationClaims> {
  const payload = await verifyServiceToken(signatureJwt, {
    keys: o.keys,
    issuer: o.issuer,
    now: o.now,
    typ: REVOCATION_TYP,
    type: 'revocation',
    checkExp: false, // a snapshot has no exp; freshness is judged by iat against maxAgeSec
    maxLength: MAX_SNAPSHOT_LENGTH,
  });
  const claims = parseRevocationClaims(payload, 'invalid_token');
  if (o.maxAgeSec !== undefined && o.now - claims.iat > o.maxAgeSec) {
    throw new ProtocolError('token_expired', 'the revocation snapshot is too old');
  }
  return claims;
}

/**
 * Local-mode revocation verdict for a pass (decisions.md §6: revocation takes effect at once).
 * A listed agent (any flag but `suspicious`, which only informs) or a listed agent+site grant
 * refuses every pass minted at or before the entry's rev_seq. A pass with a higher rev_seq was
 * minted after a re-approval or unblock that this (older) snapshot does not know about yet.
 */
export function revocationVerdict(
  claims: Pick<PassClaims, 'sub' | 'aud' | 'rev_seq'>,
  snapshot: RevocationClaims,
): 'agent_revoked' | 'grant_revoked' | null {
  for (const a of snapshot.revoked_agents) {
    if (a.id === claims.sub && a.flag !== 'suspicious' && claims.rev_seq <= a.rev_seq) return 'agent_revoked';
  }
  for (const g of snapshot.revoked_grants) {
    if (g.agent === claims.sub && g.site === claims.aud && claims.rev_seq <= g.rev_seq) return 'grant_revoked';
  }
  return null;
}
