/**
 * Approvals bound to exact details (decisions §28, §29). A step-up or an agent approval may carry
 * `details` `{summary, digest}`: the summary is what the owner reads on the card, the digest is
 * base64url SHA-256 of the RFC 8785 (JCS) canonical JSON of what the approval is for (a request's
 * JSON body, a tool call's arguments). The step-up token carries the digest as `details_digest`, and
 * the passkey challenge commits to it, so the owner's own device signs over exactly those details.
 *
 * JCS comes from `canonicalize`, the RFC authors' reference implementation for JavaScript: a
 * digest made here, by a site in another language, or by a verifier years later agrees byte for byte.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** What the owner approves beyond the action name. */
export interface ApprovalDetails {
  /** Shown on the card as written: 1 to 500 printable characters. */
  summary: string;
  /** base64url SHA-256 (43 characters, no padding) of the JCS form of the details. */
  digest: string;
}

export const DETAILS_SUMMARY_MAX_LENGTH = 500;

/** base64url of 32 bytes, unpadded: 43 characters; the last one carries 4 bits and 2 zero bits (a canonical encoding). */
const DIGEST_PATTERN = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

/*
 * Like an action, a summary is shown "as written", so what can hide or reorder what the owner reads
 * is refused: control characters other than line feed (a summary may have lines), invisible format
 * characters (bidi overrides, zero-width joiners), lone surrogates, private-use and unassigned code
 * points, line and paragraph separators. The `u` flag counts code points.
 */
const SUMMARY_PATTERN = /^(?:[^\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]|\n){1,500}$/u;

/** A details digest: base64url SHA-256, 43 characters. */
export function isDetailsDigest(value: unknown): value is string {
  return typeof value === 'string' && DIGEST_PATTERN.test(value);
}

/** A details summary: 1 to 500 printable characters (line feeds allowed), not only white space. */
export function isDetailsSummary(value: unknown): value is string {
  return typeof value === 'string' && SUMMARY_PATTERN.test(value) && /\S/u.test(value);
}

/** What is wrong with a `details` object, or null when it is valid. Names the field. */
export function detailsProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'details must be an object {summary, digest}';
  const { summary, digest, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) return `details.${extra} is not a field of details (summary, digest)`;
  if (!isDetailsSummary(summary)) return `details.summary must be 1 to ${DETAILS_SUMMARY_MAX_LENGTH} printable characters`;
  if (!isDetailsDigest(digest)) return 'details.digest must be base64url SHA-256: 43 characters of A-Z a-z 0-9 - _';
  return null;
}

/** The JCS canonical JSON of a value (RFC 8785). Throws on what JSON cannot hold (NaN, Infinity, lone surrogates, cycles, undefined at the top). */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('the value has no JSON form');
  return text;
}

/** base64url SHA-256 of the JCS form of a value: the `digest` of details for that value. */
export function detailsDigestOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('base64url');
}

/** What the passkey challenge of an approval commits to (decisions §29). */
export interface ApprovalChallengeInput {
  /** The request's txn id. */
  txn: string;
  /** The site the approval is for. */
  aud: string;
  /** The action approved. */
  action: string;
  /** The details' digest, or null for an approval without details. */
  detailsDigest: string | null;
  /** The approving person's id. */
  user: string;
  /** 128 random bits, base64url, made when the challenge is. */
  nonce: string;
}

/** `base64url(SHA-256(JCS({v: 1, txn, aud, action, details_digest, user, nonce})))`. */
export function approvalChallenge(c: ApprovalChallengeInput): string {
  const committed = { v: 1, txn: c.txn, aud: c.aud, action: c.action, details_digest: c.detailsDigest, user: c.user, nonce: c.nonce };
  return createHash('sha256').update(canonicalJson(committed), 'utf8').digest('base64url');
}
