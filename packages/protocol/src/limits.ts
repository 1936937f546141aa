/**
 * Numeric limits of the protocol (interface.md "Limits", decisions.md §4, §5, §8, §9).
 * One table so the server, the SDKs and the local verifier cannot drift apart.
 */
export const LIMITS = {
  /** Agent JWT: exp - iat may not exceed this. */
  agentJwtMaxLifetimeSec: 900,
  /** Agent JWT: iat may be at most this far ahead of our clock (agent clock skew). */
  agentJwtMaxFutureIatSec: 60,
  /** DPoP proof: iat accepted within this many seconds either way of now. */
  dpopIatToleranceSec: 120,
  dpopJtiMinLength: 8,
  dpopJtiMaxLength: 128,
  /** A consumed jti is remembered at least this long; longer than the 2 x 120 s acceptance window. */
  dpopJtiRetentionSec: 250,
  passLifetimeSec: 600,
  stepupLifetimeSec: 60,
  requestLifetimeSec: 300,
  tokenWithoutRefreshSec: 3600,
  reportPassMaxAgeSec: 7 * 86400,
  maxScopes: 20,
  maxScopeLength: 64,
  actionMaxLength: 200,
} as const;

/** One scope as defined by a site: short, lower-case, shown to the person as written. */
export const SCOPE_PATTERN = /^[a-z0-9_:.-]{1,64}$/;

/** 1 to LIMITS.maxScopes scopes, each matching SCOPE_PATTERN. */
export function isValidScopeList(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length >= 1 &&
    value.length <= LIMITS.maxScopes &&
    value.every((s) => typeof s === 'string' && SCOPE_PATTERN.test(s))
  );
}

/*
 * An action is shown to the owner "as written", so anything that can hide or reorder what the
 * owner reads is refused: control characters (Cc), invisible format characters such as bidi
 * overrides and zero-width joiners (Cf), lone surrogates (Cs), private-use and unassigned code
 * points (Co, Cn) and line/paragraph separators (Zl, Zp). The `u` flag makes the {1,200} count
 * code points, not UTF-16 units.
 */
const ACTION_PATTERN = /^[^\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]{1,200}$/u;

/** A step-up action: 1 to 200 printable characters, not only whitespace. */
export function isValidAction(s: unknown): s is string {
  return typeof s === 'string' && ACTION_PATTERN.test(s) && /\S/u.test(s);
}
