import type { Config } from './config/config.ts';
import type { Accounts } from './domain/accounts/accounts.ts';
import type { Agents } from './domain/agents/agents.ts';
import type { Clock } from './domain/clock.ts';
import type { RateLimiter } from './domain/rate-limit.ts';
import type { SigningKeys } from './crypto/signing-keys.ts';
import type { Passkeys } from './domain/passkeys/passkeys.ts';
import type { OwnerAuth } from './http/auth/owner.ts';
import type { Store } from './store/ports.ts';
import type { Approvals } from './domain/approvals/approvals.ts';
import type { Grants } from './domain/grants/grants.ts';
import type { RevocationSnapshots } from './domain/revocation/snapshot.ts';
import type { AgentStatuses } from './domain/agents/agent-status.ts';
import type { AgentNotes } from './domain/notes.ts';
import type { Reputation } from './domain/reputation/reputation.ts';
import type { Reports } from './domain/reputation/reports.ts';
import type { Activity } from './domain/activity/activity.ts';
import type { Notifier } from './delivery/notifier.ts';
import type { Passes } from './domain/passes/issue-pass.ts';
import type { CloudVerifier } from './domain/verification/cloud-verify.ts';
import type { LocalStepupVerifier } from './domain/verification/local-stepup.ts';

/** Everything the routes may call, built once in app.ts. */
export interface Services {
  /** Access and step-up requests, polling, the owner's decisions (domain/approvals). */
  approvals: Approvals;
  /** The owner's grants: listLive, owned, revoke, narrowUserInfo (domain/grants). */
  grants: Grants;
  config: Config;
  store: Store;
  clock: Clock;
  limiter: RateLimiter;
  keys: SigningKeys;
  accounts: Accounts;
  agents: Agents;
  passkeys: Passkeys;
  auth: OwnerAuth;
  activity: Activity;
  notifier: Notifier;
  passes: Passes;
  verifier: CloudVerifier;
  localStepup: LocalStepupVerifier;
  revocation: RevocationSnapshots;
  agentStatuses: AgentStatuses;
  notes: AgentNotes;
  reputation: Reputation;
  reports: Reports;
}
