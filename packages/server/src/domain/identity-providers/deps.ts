import type { OAuthProviderConfig } from '../../config/oauth-providers.ts';
import type { Clock } from '../../clock.ts';
import type { Store } from '../../store/ports/index.ts';
import type { Accounts } from '../accounts/accounts.ts';
import type { Activity } from '../activity/activity.ts';
import type { Approvals } from '../approvals/approvals.ts';
import type { Notifier } from '../notifications/notifier.ts';
import type { RateLimiter } from '../rate-limit.ts';
import type { IssuerPort } from './issuer-port.ts';

/** What the identity-provider steps need; one object so each concept file stays a few plain functions. */
export interface IdentityProviderDeps {
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
  accounts: Pick<Accounts, 'startSession'>;
  approvals: Pick<Approvals, 'checkIdentityProviderApproval' | 'approveByIdentityProvider'>;
  activity: Activity;
  notifier: Pick<Notifier, 'security'>;
  issuers: IssuerPort;
  providers: readonly OAuthProviderConfig[];
}

/** A flow's state lives ten minutes: long enough to sign in at the issuer, short enough to be useless later. */
export const FLOW_LIFETIME_MS = 10 * 60 * 1000;
/** An approval needs a sign-in at the issuer at most this old (`auth_time`; decisions §15). */
export const APPROVAL_MAX_AGE_SEC = 5 * 60;
/** Flows started per client: plenty for a person, not for filling the database with states. */
export const START_LIMIT = { perAddress: 60, perNetwork: 180, windowSec: 600 } as const;
