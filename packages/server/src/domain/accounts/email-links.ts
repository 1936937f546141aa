/**
 * The secret links Mandate mails (decisions §25): 32 random bytes, base64url, in the link only; the
 * store keeps their SHA-256, bound to the account and the address mailed. Single-use, 24 hours
 * (a password-reset link: 1 hour).
 */
import { randomToken, sha256Hex } from '../../crypto/random.ts';
import type { EmailTokenPurpose, Repos } from '../../store/ports/index.ts';
import { addressKey } from '../client-address.ts';

export const LINK_LIFETIME_SEC = 86_400;
export const LINK_LIFETIME_MS = LINK_LIFETIME_SEC * 1000;

/**
 * Page views and confirmations of links per client (an IPv4 address or IPv6 /64: client-address.ts)
 * per 10 minutes. A link cannot be guessed; this bounds the work. Every kind of mailed link counts
 * under the one key `keyFor` makes.
 */
export const LINK_ATTEMPTS = {
  perAddress: 30,
  windowSec: 600,
  keyFor: (clientAddress: string): string => `email-link:addr:${addressKey(clientAddress)}`,
} as const;

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** The stored key of a token, or undefined for anything not shaped like one (no lookup then). */
export const linkKey = (token: string): string | undefined => (TOKEN.test(token) ? sha256Hex(token) : undefined);

/** A new link token for `purpose`, stored (in `repos`' transaction) and answered with its expiry. */
export async function issueLink(
  repos: Repos,
  now: number,
  o: { purpose: EmailTokenPurpose; userId: string; email: string; subject: string | null; lifetimeMs?: number },
): Promise<{ token: string; expiresAt: number }> {
  const token = randomToken(32);
  // 24 hours unless the purpose asks for less (a password-reset link lasts 1 hour).
  const expiresAt = now + (o.lifetimeMs ?? LINK_LIFETIME_MS);
  await repos.emailTokens.create({ tokenHash: sha256Hex(token), purpose: o.purpose, userId: o.userId, email: o.email, subject: o.subject, createdAt: now, expiresAt });
  return { token, expiresAt };
}

/** `https://host/api/...?token=...`: where the mail sends the person. */
export const linkUrl = (baseUrl: string, path: string, token: string): string => `${baseUrl.replace(/\/+$/, '')}${path}?token=${token}`;
