import { LIMITS, type PassClaims } from '@mandate/protocol';
import type { AgentRecord, GrantRecord, UserRecord } from '../../store/ports/index.ts';
import { resolveUserInfo } from '../user-info.ts';
import { agentJkt } from '../agents/agent-key.ts';

export interface PassClaimsInput {
  issuer: string;
  agent: AgentRecord;
  /** The grant as updated by the issuance (its current scopes and user-info fields). */
  grant: GrantRecord;
  user: UserRecord | undefined;
  /** Epoch ms. */
  now: number;
  jti: string;
  revSeq: number;
}

/**
 * Claims of a pass (decisions §5, §8): 10 minutes, or less when the grant expires sooner.
 * `user_info` holds the owner's values for the grant's CURRENT fields, read now, so a narrowed grant
 * stops disclosing with the next pass; it is always present (possibly `{}`), so every pass has the
 * same claim set.
 */
export function passClaims(i: PassClaimsInput): PassClaims {
  const { iat, exp } = passTimes(i.grant, i.now);
  const jkt = agentJkt(i.agent);
  return {
    iss: i.issuer,
    sub: i.agent.id,
    aud: i.grant.site,
    user: i.grant.userId,
    scope: [...i.grant.scopes],
    user_info: i.user ? resolveUserInfo(i.user, i.grant.userInfo) : {},
    cnf: { dpop: jkt, jkt },
    type: 'access',
    iat,
    exp,
    jti: i.jti,
    grant: i.grant.id,
    rev_seq: i.revSeq,
  };
}

/** `iat` and `exp` (seconds) of a pass issued at `now` (ms) under `grant`: 10 minutes, or less when the grant ends sooner. */
export function passTimes(grant: Pick<GrantRecord, 'expiresAt'>, now: number): { iat: number; exp: number } {
  const iat = Math.floor(now / 1000);
  const grantEnd = grant.expiresAt === null ? Infinity : Math.floor(grant.expiresAt / 1000);
  return { iat, exp: Math.min(iat + LIMITS.passLifetimeSec, grantEnd) };
}
