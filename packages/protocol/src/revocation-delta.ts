/**
 * Revocation deltas (decisions §30): after the snapshot that opens `GET /api/v1/revocation/events`,
 * each change to the revocation list comes as a delta JWT signed like snapshots (header typ
 * `revocation-delta+jwt`, claim `type` `revocation-delta`): the entries `added` (or replaced: same
 * agent id, same agent + site) and `removed` between `prev_seq` and `rev_seq`. One definition for the
 * service that signs them and the site SDK that applies them.
 */
import { revokedAgent, revokedGrant } from './claim-shapes.ts';
import type { RevocationClaims, RevokedAgent, RevokedGrant } from './claims.ts';
import type { VerifyErrorCode } from './errors.ts';
import { ProtocolError } from './errors.ts';
import type { ServiceKeys } from './keys.ts';
import { verifyServiceToken } from './service-token.ts';
import type { JsonObject } from './shape.ts';
import { isInt, isNonNegativeInt, isNonEmptyString, isObject } from './shape.ts';

export const REVOCATION_DELTA_TYP = 'revocation-delta+jwt';

export type RevocationEntries = { revoked_agents: RevokedAgent[]; revoked_grants: RevokedGrant[] };

/** Signed content of a delta: applies to the list at `prev_seq` and makes the list at `rev_seq`. */
export type RevocationDeltaClaims = {
  type: 'revocation-delta';
  iss: string;
  iat: number;
  rev_seq: number;
  prev_seq: number;
  added: RevocationEntries;
  removed: RevocationEntries;
};

/**
 * Refused before its signature is checked when longer: as for snapshots (revocation.ts), since one delta
 * can remove a whole list at once (every entry aging out of the window together).
 */
const MAX_DELTA_LENGTH = 8 * 1024 * 1024;

function entries(v: unknown, what: string, code: VerifyErrorCode): RevocationEntries {
  if (!isObject(v) || !Array.isArray(v.revoked_agents) || !Array.isArray(v.revoked_grants)) {
    throw new ProtocolError(code, `the token claim ${what} is missing or malformed`);
  }
  return {
    revoked_agents: v.revoked_agents.map((a: unknown) => revokedAgent(a, code)),
    revoked_grants: v.revoked_grants.map((g: unknown) => revokedGrant(g, code)),
  };
}

export function parseRevocationDeltaClaims(p: JsonObject, code: VerifyErrorCode = 'invalid_token'): RevocationDeltaClaims {
  const { type, iss, iat, rev_seq, prev_seq } = p;
  const bad = (what: string): never => {
    throw new ProtocolError(code, `the token claim ${what} is missing or malformed`);
  };
  if (type !== 'revocation-delta') bad('type');
  if (!isNonEmptyString(iss)) bad('iss');
  if (!isInt(iat)) bad('iat');
  if (!isNonNegativeInt(rev_seq)) return bad('rev_seq');
  if (!isNonNegativeInt(prev_seq) || prev_seq >= rev_seq) return bad('prev_seq');
  return { type: 'revocation-delta', iss: iss as string, iat: iat as number, rev_seq, prev_seq, added: entries(p.added, 'added', code), removed: entries(p.removed, 'removed', code) };
}

export type VerifyRevocationDeltaOptions = { keys: ServiceKeys; issuer: string; now: number };

/** Verifies a delta's JWT (signature, typ, issuer, shape); only its signed content is to be trusted. */
export async function verifyRevocationDelta(jwt: unknown, o: VerifyRevocationDeltaOptions): Promise<RevocationDeltaClaims> {
  const payload = await verifyServiceToken(jwt, {
    keys: o.keys,
    issuer: o.issuer,
    now: o.now,
    typ: REVOCATION_DELTA_TYP,
    type: 'revocation-delta',
    checkExp: false,
    maxLength: MAX_DELTA_LENGTH,
  });
  return parseRevocationDeltaClaims(payload, 'invalid_token');
}

const grantKey = (g: RevokedGrant): string => `${g.agent}\u0000${g.site}`;

/**
 * The list after the delta: `removed` entries taken out, `added` ones put in (replacing the entry of the
 * same agent, or agent + site); `rev_seq` and `iat` (the freshness `max_stale` judges) become the
 * delta's. Throws ProtocolError `invalid_request` when the delta does not follow this list
 * (`prev_seq` is not its `rev_seq`): the caller missed a change and must fetch a snapshot.
 */
export function applyRevocationDelta(list: RevocationClaims, delta: RevocationDeltaClaims): RevocationClaims {
  if (delta.iss !== list.iss) throw new ProtocolError('invalid_request', 'the delta is from another issuer');
  if (delta.prev_seq !== list.rev_seq) {
    throw new ProtocolError('invalid_request', `the delta follows rev_seq ${delta.prev_seq}, the list is at ${list.rev_seq}: fetch a snapshot`);
  }
  const agents = new Map(list.revoked_agents.map((a) => [a.id, a]));
  const grants = new Map(list.revoked_grants.map((g) => [grantKey(g), g]));
  for (const a of delta.removed.revoked_agents) agents.delete(a.id);
  for (const g of delta.removed.revoked_grants) grants.delete(grantKey(g));
  for (const a of delta.added.revoked_agents) agents.set(a.id, a);
  for (const g of delta.added.revoked_grants) grants.set(grantKey(g), g);
  return {
    type: 'revocation',
    iss: list.iss,
    iat: Math.max(list.iat, delta.iat),
    rev_seq: delta.rev_seq,
    revoked_agents: [...agents.values()],
    revoked_grants: [...grants.values()],
  };
}
