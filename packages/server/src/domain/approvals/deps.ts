import type { SigningKeys } from '../../crypto/signing-keys.ts';
import type { Notifier } from '../notifications/notifier.ts';
import type { Store } from '../../store/ports/index.ts';
import type { Activity } from '../activity/activity.ts';
import type { Agents } from '../agents/agents.ts';
import type { Clock } from '../../clock.ts';
import type { Passkeys } from '../passkeys/passkeys.ts';
import type { RateLimiter } from '../rate-limit.ts';
import type { PlanMatch } from '../modes/plan-match.ts';

/** What the approval steps need; one object so each concept file stays a few plain functions. */
export interface ApprovalDeps {
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
  agents: Agents;
  passkeys: Passkeys;
  keys: SigningKeys;
  activity: Activity;
  notifier: Notifier;
  /** The plans seam (domain/modes/plan-match.ts); absent: no plan matches. */
  planMatch?: PlanMatch;
  /** `iss` of the step-up tokens: the base URL exactly. */
  issuer: string;
}
