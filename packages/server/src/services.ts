import type { Config } from './config/config.ts';
import type { Accounts } from './domain/accounts/accounts.ts';
import type { Agents } from './domain/agents/agents.ts';
import type { Clock } from './clock.ts';
import type { RateLimiter } from './domain/rate-limit.ts';
import type { SigningKeys } from './crypto/signing-keys.ts';
import type { Passkeys } from './domain/passkeys/passkeys.ts';
import type { OwnerAuth } from './http/auth/owner.ts';
import type { Store } from './store/ports/index.ts';
import type { Approvals } from './domain/approvals/approvals.ts';
import type { Plans } from './domain/plans/plans-service.ts';
import type { Grants } from './domain/grants/grants.ts';
import type { RevocationSnapshots } from './domain/revocation/snapshot.ts';
import type { RevocationEvents } from './domain/revocation/events.ts';
import type { AgentStatuses } from './domain/agents/agent-status.ts';
import type { AgentNotes } from './domain/notes.ts';
import type { Reputation } from './domain/reputation/reputation.ts';
import type { Reports } from './domain/reputation/reports.ts';
import type { Activity } from './domain/activity/activity.ts';
import type { Notifier } from './domain/notifications/notifier.ts';
import type { NotifySettings } from './domain/notifications/settings.ts';
import type { Inbox } from './domain/notifications/inbox.ts';
import type { Devices } from './domain/devices/devices.ts';
import type { OutboxWorker } from './delivery/outbox-worker.ts';
import type { Passes } from './domain/passes/issue-pass.ts';
import type { CloudVerifier } from './domain/verification/cloud-verify.ts';
import type { LocalStepupVerifier } from './domain/verification/local-stepup.ts';
import type { OidcClients } from './domain/oidc/clients.ts';
import type { Pairing } from './domain/agents/pairing.ts';
import type { OidcProvider } from './domain/oidc/provider.ts';
import type { AppConsent } from './domain/oidc/authorize-consent.ts';
import type { EmailVerification } from './domain/accounts/email-verification.ts';
import type { AddressTakeover } from './domain/accounts/address-takeover.ts';
import type { FirstPasskeyNotice } from './domain/passkeys/first-passkey.ts';
import type { Metrics } from './metrics/metrics.ts';
import type { PasswordReset } from './domain/accounts/password-reset.ts';
import type { DataExport } from './domain/privacy/export.ts';
import type { Phone } from './domain/phone/phone.ts';
import type { Recovery } from './domain/recovery/recovery.ts';
import type { IdentityProviders } from './domain/identity-providers/identity-providers.ts';
import type { SdkTarballs } from './downloads/sdk-tarballs.ts';
import type { WordpressZips } from './downloads/wordpress-zip.ts';
import type { Takeovers } from './domain/takeovers/takeovers.ts';
import type { TakeoverRelay } from './relay/takeover-relay.ts';
import type { AccountDeletion } from './domain/privacy/account-deletion.ts';
import type { Operators } from './domain/operators/operators.ts';
import type { Consent } from './domain/operators/consent.ts';
import type { ConnectionLifecycle } from './domain/operators/connection-lifecycle.ts';
import type { OperatorAgents } from './domain/operators/operator-agents.ts';
import type { Readiness } from './domain/readiness/readiness.ts';
import type { Challenge } from './domain/challenge/challenge.ts';
import type { WebBotAuth } from './domain/wba/web-bot-auth.ts';
import type { AgentChecks } from './domain/wba/check-agent.ts';
import type { Receipts } from './domain/receipts/receipts.ts';

/** Everything the routes may call, built once in app.ts. */
export interface Services {
  /** /challenge: the instance's own protected demo route (domain/challenge; decisions §23). */
  challenge: Challenge;
  /** GET /api/readiness and /check: a site's readiness, cached in the store (domain/readiness; decisions §22). */
  readiness: Readiness;
  /** Web Bot Auth keys, proofs and the directories served (domain/wba; decisions §22). */
  wba: WebBotAuth;
  /** POST /api/v1/check-agent and /tools/check-agent (domain/wba/check-agent.ts). */
  agentChecks: AgentChecks;
  /** Operators: registration, secret, domain verification, the admin switch (domain/operators; decisions §17). */
  operators: Operators;
  /** Consent to an operator and the code exchange (domain/operators/consent.ts; decisions §17). */
  consent: Consent;
  /** The person's connections: list, limit, disconnect; every end of a connection (domain/operators/connection-lifecycle.ts). */
  connections: ConnectionLifecycle;
  /** The operator API's agents and connections (domain/operators/operator-agents.ts). */
  operatorAgents: OperatorAgents;
  /** Take-over sessions and reports (domain/takeovers; decisions §21). */
  takeovers: Takeovers;
  /** The take-over WebSocket relay of this node (relay/takeover-relay.ts). */
  relay: TakeoverRelay;
  /** POST /api/account/delete: its erasure steps, one per concept (domain/privacy); `addStep` is the seam for new ones. */
  accountDeletion: AccountDeletion;
  /** Sign-in, linking and approval with identity providers (domain/identity-providers; decisions §15). */
  identityProviders: IdentityProviders;
  /** The agent and site SDK tarballs the build made, served at /download/agent and /download/site. */
  sdkTarballs: SdkTarballs;
  wordpressZips: WordpressZips;
  /** Prometheus metrics, counted by the routes (metrics/metrics.ts). */
  metrics: Metrics;
  /** The owner's phone: SMS codes, verification, unlinking (domain/phone/phone.ts). */
  phone: Phone;
  /** Recovery codes and account recovery by SMS (domain/recovery/recovery.ts). */
  recovery: Recovery;
  /** Email verification links and changes of address (domain/accounts/email-verification.ts). */
  emailVerification: EmailVerification;
  /** Forgotten password: the mailed link and the reset (domain/accounts/password-reset.ts). */
  passwordReset: PasswordReset;
  /** GET /api/export: the data export, a list of named sections (domain/privacy/export.ts). */
  dataExport: DataExport;
  /** Taking an address from an account that never verified it (issue 22). */
  addressTakeover: AddressTakeover;
  /** The notice, and undo link, for an account's first passkey (domain/passkeys/first-passkey.ts). */
  firstPasskey: FirstPasskeyNotice;
  /** The owner's OIDC clients (sites) and client authentication for the token endpoint (domain/oidc). */
  oidcClients: OidcClients;
  /** One-time codes that pair an agent's key with its owner (domain/agents/pairing.ts). */
  pairing: Pairing;
  /** The OIDC provider: authorize, wait, token, userinfo (domain/oidc/provider.ts). */
  oidc: OidcProvider;
  /** A person's browser at /oidc/authorize: the consent page and apps as agents (domain/oidc/authorize-consent.ts; decisions §28). */
  appConsent: AppConsent;
  /** GET /api/push/keys: the VAPID public key browsers subscribe with. */
  vapidPublicKey: string;
  /** The owner's notification settings (quiet hours, what is pushed). */
  notifySettings: NotifySettings;
  /** The owner's notification inbox. */
  inbox: Inbox;
  /** Passkeys, web-push subscriptions and FCM registrations: list, register, remove. */
  devices: Devices;
  /** Sends the outbox; also sends test pushes at once. */
  outbox: OutboxWorker;
  /** Access and step-up requests, polling, the owner's decisions (domain/approvals). */
  approvals: Approvals;
  /** Receipts of approvals, with the attestation of the passkey's key (domain/receipts; decisions §29). */
  receipts: Receipts;
  /** Plans an owner pre-approves (domain/plans); `plans.matchStep` is the agent-approval seam. */
  plans: Plans;
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
  /** The revocation event stream of this node (decisions §30). */
  revocationEvents: RevocationEvents;
  agentStatuses: AgentStatuses;
  notes: AgentNotes;
  reputation: Reputation;
  reports: Reports;
}
