import type { OidcSecret } from '../../crypto/oidc-secret.ts';
import type { SigningKeys } from '../../crypto/signing-keys.ts';
import type { Store } from '../../store/ports/index.ts';
import type { Activity } from '../activity/activity.ts';
import type { Clock } from '../../clock.ts';
import type { Notifier } from '../notifications/notifier.ts';
import type { RateLimiter } from '../rate-limit.ts';
import type { OidcClients } from './clients.ts';
import type { MetadataDocuments } from './metadata-documents.ts';

/** What the provider's steps need; one object so each step stays a few plain functions. */
export interface OidcDeps {
  store: Store;
  clock: Clock;
  keys: SigningKeys;
  secret: OidcSecret;
  clients: OidcClients;
  /** Clients known by the URL of their Client ID Metadata Document (decisions §28). */
  metadataDocuments: MetadataDocuments;
  notifier: Notifier;
  activity: Activity;
  limiter: RateLimiter;
  /** The base URL exactly: `iss` of every token, and the origin an agent header's `htu` must name. */
  issuer: string;
}

/** Lifetimes (decisions §18). */
export const CODE_LIFETIME_MS = 60_000;
export const ID_TOKEN_LIFETIME_SEC = 600;
export const ACCESS_TOKEN_LIFETIME_SEC = 600;
export const SIGN_IN_LIFETIME_MS = 30 * 24 * 3600_000;
export const AGENT_HEADER_MAX_LIFETIME_SEC = 60;
/** The scopes this provider knows; others are ignored (OpenID Connect Core §3.1.2.1). */
export const SUPPORTED_SCOPES = ['openid', 'profile', 'email', 'phone'] as const;

/**
 * Rate limits of the provider, counted in the shared store (per minute). A refresh token is used
 * once a few minutes by a relying party; an agent signs in a few times a minute at most; each CIBA
 * request puts a card on the owner's phone.
 */
export const TOKEN_LIMITS = {
  refreshesPerMinute: 60,
  authorizePerAgentPerMinute: 60,
  cibaRequestsPerMinute: 30,
  userinfoPerSignInPerMinute: 120,
  introspectPerClientPerMinute: 1200,
  revokePerClientPerMinute: 600,
} as const;
