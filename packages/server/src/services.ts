import type { Config } from './config/config.ts';
import type { Accounts } from './domain/accounts/accounts.ts';
import type { Agents } from './domain/agents/agents.ts';
import type { Clock } from './domain/clock.ts';
import type { RateLimiter } from './domain/rate-limit.ts';
import type { SigningKeys } from './crypto/signing-keys.ts';
import type { Passkeys } from './domain/passkeys/passkeys.ts';
import type { OwnerAuth } from './http/auth/owner.ts';
import type { Store } from './store/ports.ts';

/** Everything the routes may call, built once in app.ts. */
export interface Services {
  config: Config;
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
  keys: SigningKeys;
  accounts: Accounts;
  agents: Agents;
  passkeys: Passkeys;
  auth: OwnerAuth;
}
