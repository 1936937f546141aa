import { isDetailsDigest } from './approval-details.ts';
import type {
  AgentJwtClaims,
  Confirmation,
  PassClaims,
  ResourcePassClaims,
  RevocationClaims,
  RevokedAgent,
  RevokedGrant,
  StepupClaims,
} from './claims.ts';
import type { VerifyErrorCode } from './errors.ts';
import { ProtocolError } from './errors.ts';
import type { JsonObject } from './shape.ts';
import {
  isInt,
  isNonEmptyString,
  isNonNegativeInt,
  isObject,
  isStringArray,
  isStringRecord,
} from './shape.ts';

/*
 * Shape checks of verified payloads. They run after the signature check, but they still matter:
 * a well-typed result is what lets callers use the claims without re-checking, and a token that
 * lacks a claim must fail here rather than as a TypeError deep inside the server.
 * Each returns a fresh object with only the known claims.
 */

function fail(code: VerifyErrorCode, what: string): never {
  throw new ProtocolError(code, `the token claim ${what} is missing or malformed`);
}

function confirmation(value: unknown, code: VerifyErrorCode): Confirmation {
  if (!isObject(value)) fail(code, 'cnf');
  const { dpop, jkt } = value;
  if (!isNonEmptyString(dpop)) fail(code, 'cnf.dpop');
  // cnf.jkt is minted beside cnf.dpop for generic RFC 9449 servers; two different values
  // would mean two different bindings, so they must agree.
  if (!isNonEmptyString(jkt) || jkt !== dpop) fail(code, 'cnf.jkt');
  return { dpop, jkt };
}

/** The claims every pass carries, whatever it is bound to. */
function passCore(p: JsonObject, code: VerifyErrorCode): Omit<PassClaims, 'cnf'> {
  const { iss, sub, aud, user, scope, user_info, type, iat, exp, jti, grant, rev_seq } = p;
  if (type !== 'access') fail(code, 'type');
  if (!isNonEmptyString(iss)) fail(code, 'iss');
  if (!isNonEmptyString(sub)) fail(code, 'sub');
  if (!isNonEmptyString(aud)) fail(code, 'aud');
  if (!isNonEmptyString(user)) fail(code, 'user');
  if (!isStringArray(scope)) fail(code, 'scope');
  if (user_info !== undefined && !isStringRecord(user_info)) fail(code, 'user_info');
  if (!isInt(iat)) fail(code, 'iat');
  if (!isInt(exp)) fail(code, 'exp');
  if (!isNonEmptyString(jti)) fail(code, 'jti');
  if (!isNonEmptyString(grant)) fail(code, 'grant');
  if (!isNonNegativeInt(rev_seq)) fail(code, 'rev_seq');
  const claims: Omit<PassClaims, 'cnf'> = { iss, sub, aud, user, scope: [...scope], type, iat, exp, jti, grant, rev_seq };
  if (user_info !== undefined) claims.user_info = { ...user_info };
  return claims;
}

/** A pass of an agent: always bound to the agent's key (`cnf`). */
export function parsePassClaims(p: JsonObject, code: VerifyErrorCode = 'invalid_token'): PassClaims {
  return { ...passCore(p, code), cnf: confirmation(p.cnf, code) };
}

/**
 * A pass for a protected resource (decisions §28): `client_id` names the app, and `cnf` is there only
 * when the app proved a DPoP key at the token endpoint (absent: a bearer pass).
 */
export function parseResourcePassClaims(p: JsonObject, code: VerifyErrorCode = 'invalid_token'): ResourcePassClaims {
  const core = passCore(p, code);
  if (!isNonEmptyString(p.client_id)) fail(code, 'client_id');
  const claims: ResourcePassClaims = { ...core, client_id: p.client_id };
  if (p.cnf !== undefined) claims.cnf = confirmation(p.cnf, code);
  return claims;
}

export function parseStepupClaims(p: JsonObject, code: VerifyErrorCode = 'stepup_invalid'): StepupClaims {
  const { iss, sub, aud, user, act, type, jti, iat, exp, cnf, details_digest } = p;
  if (type !== 'stepup') fail(code, 'type');
  if (!isNonEmptyString(iss)) fail(code, 'iss');
  if (!isNonEmptyString(sub)) fail(code, 'sub');
  if (!isNonEmptyString(aud)) fail(code, 'aud');
  if (!isNonEmptyString(user)) fail(code, 'user');
  if (!isStringArray(act) || act.length === 0) fail(code, 'act');
  if (!isNonEmptyString(jti)) fail(code, 'jti');
  if (!isInt(iat)) fail(code, 'iat');
  if (!isInt(exp)) fail(code, 'exp');
  if (details_digest !== undefined && !isDetailsDigest(details_digest)) fail(code, 'details_digest');
  const claims: StepupClaims = { iss, sub, aud, user, act: [...act], type, jti, iat, exp, cnf: confirmation(cnf, code) };
  if (details_digest !== undefined) claims.details_digest = details_digest;
  return claims;
}

export function revokedAgent(v: unknown, code: VerifyErrorCode): RevokedAgent {
  if (!isObject(v)) fail(code, 'revoked_agents[]');
  const { id, flag, rev_seq } = v;
  if (!isNonEmptyString(id) || !isNonEmptyString(flag) || !isNonNegativeInt(rev_seq)) {
    fail(code, 'revoked_agents[]');
  }
  return { id, flag, rev_seq };
}

export function revokedGrant(v: unknown, code: VerifyErrorCode): RevokedGrant {
  if (!isObject(v)) fail(code, 'revoked_grants[]');
  const { agent, site, rev_seq } = v;
  if (!isNonEmptyString(agent) || !isNonEmptyString(site) || !isNonNegativeInt(rev_seq)) {
    fail(code, 'revoked_grants[]');
  }
  return { agent, site, rev_seq };
}

export function parseRevocationClaims(
  p: JsonObject,
  code: VerifyErrorCode = 'invalid_token',
): RevocationClaims {
  const { type, iss, iat, rev_seq, revoked_agents, revoked_grants } = p;
  if (type !== 'revocation') fail(code, 'type');
  if (!isNonEmptyString(iss)) fail(code, 'iss');
  if (!isInt(iat)) fail(code, 'iat');
  if (!isNonNegativeInt(rev_seq)) fail(code, 'rev_seq');
  if (!Array.isArray(revoked_agents)) fail(code, 'revoked_agents');
  if (!Array.isArray(revoked_grants)) fail(code, 'revoked_grants');
  return {
    type,
    iss,
    iat,
    rev_seq,
    revoked_agents: revoked_agents.map((v: unknown) => revokedAgent(v, code)),
    revoked_grants: revoked_grants.map((v: unknown) => revokedGrant(v, code)),
  };
}

export function parseAgentJwtClaims(
  p: JsonObject,
  code: VerifyErrorCode = 'invalid_token',
): AgentJwtClaims {
  const { iss, sub, iat, exp, type } = p;
  if (type !== 'agent') fail(code, 'type');
  if (!isNonEmptyString(iss)) fail(code, 'iss');
  if (!isNonEmptyString(sub)) fail(code, 'sub');
  if (!isInt(iat)) fail(code, 'iat');
  if (!isInt(exp)) fail(code, 'exp');
  return { iss, sub, iat, exp, type };
}
