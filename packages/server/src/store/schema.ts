import type { Generated } from 'kysely';

/**
 * Row types of every table, shared by both dialects. Times are epoch milliseconds (bigint in
 * PostgreSQL, parsed back to number); booleans are 0/1 integers and JSON is text, so that one
 * query layer serves SQLite and PostgreSQL alike.
 */
export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  passkeys: PasskeysTable;
  webauthn_challenges: ChallengesTable;
  agents: AgentsTable;
  signing_keys: SigningKeysTable;
  single_use: SingleUseTable;
  rate_counters: RateCountersTable;
  counters: CountersTable;
  outbox: OutboxTable;
  authz_requests: AuthzRequestsTable;
  grants: GrantsTable;
  reports: ReportsTable;
  agent_statuses: AgentStatusesTable;
  activity: ActivityTable;
  leases: LeasesTable;
  push_devices: PushDevicesTable;
  notifications: NotificationsTable;
  notify_settings: NotifySettingsTable;
  service_secrets: ServiceSecretsTable;
  oidc_clients: OidcClientsTable;
  oidc_registered_clients: OidcRegisteredClientsTable;
  approval_modes: ApprovalModesTable;
  approval_pause_scopes: ApprovalPauseScopesTable;
  oidc_sign_ins: OidcSignInsTable;
  oidc_subjects: OidcSubjectsTable;
  oidc_ciba: OidcCibaTable;
  email_tokens: EmailTokensTable;
  email_claims: EmailClaimsTable;
  phone_codes: PhoneCodesTable;
  plans: PlansTable;
  plan_steps: PlanStepsTable;
  plan_uses: PlanUsesTable;
  recovery_codes: RecoveryCodesTable;
  oauth_identities: OAuthIdentitiesTable;
  oauth_states: OAuthStatesTable;
  takeovers: TakeoversTable;
  takeover_reports: TakeoverReportsTable;
  operators: OperatorsTable;
  operator_connections: OperatorConnectionsTable;
  operator_codes: OperatorCodesTable;
  readiness_checks: ReadinessChecksTable;
  wba_keys: WbaKeysTable;
  approval_receipts: ApprovalReceiptsTable;
}

export interface UsersTable {
  id: string;
  email: string;
  display_name: string;
  password_hash: string;
  phone: string | null;
  phone_verified: number;
  created_at: number;
  /** When the current email was verified by a link (migration 011); null: not verified. */
  email_verified_at: number | null;
}

export interface SessionsTable {
  token_hash: string;
  user_id: string;
  created_at: number;
  expires_at: number;
  /** 'password' | 'passkey' (migration 003) | 'recovery' (issue 23). */
  method: string;
}

export interface PasskeysTable {
  id: string;
  user_id: string;
  credential_id: string;
  public_key: string;
  counter: number;
  transports: string;
  name: string;
  created_at: number;
  last_used_at: number | null;
}

export interface ChallengesTable {
  challenge: string;
  purpose: string;
  user_id: string | null;
  session_hash: string | null;
  subject: string | null;
  expires_at: number;
  used_at: number | null;
  /** Migration 030: the nonce an approval's challenge commits to; null for other challenges. */
  nonce: string | null;
}

export interface AgentsTable {
  id: string;
  user_id: string;
  name: string;
  public_jwk: string;
  jkt: string;
  status: string;
  flag: string;
  flag_rev_seq: number | null;
  created_at: number;
  removed_at: number | null;
  /** When a `revoked` flag was last lifted, and that block's rev_seq (migration 004). */
  unblocked_at: number | null;
  unblocked_rev_seq: number | null;
  /** When the current non-ok flag was set; null while `ok` (migration 018). */
  flagged_at: number | null;
  /** Operator-created agents (migration 024): the operator, connection and browser kind; null otherwise. */
  operator_id: string | null;
  connection_id: string | null;
  browser: string | null;
  /** Set while the operator switch blocks the agent (`status` = `blocked`): when, and at which rev_seq. */
  operator_blocked_at: number | null;
  operator_blocked_rev_seq: number | null;
  /** 1 while the owner lets an operator-browser agent use the password manager (migration 025); 0 (off) by default. */
  password_manager: Generated<number>;
  /** Set while the owner's connection limit suspends the agent (`status` = `suspended`; migration 027): when, and at which rev_seq. */
  suspended_at: number | null;
  suspended_rev_seq: number | null;
  /** `agent` or `app` (migration 033); an app's public_jwk and jkt are ''. */
  kind: Generated<string>;
  /** The OAuth client_id of an app (migration 033); null for agents. */
  client_id: string | null;
}

export interface SigningKeysTable {
  kid: string;
  public_jwk: string;
  private_jwk: string;
  encrypted: number;
  created_at: number;
  retired_at: number | null;
}

export interface SingleUseTable {
  namespace: string;
  key: string;
  expires_at: number;
}

export interface RateCountersTable {
  key: string;
  window_start: number;
  count: number;
  expires_at: number;
}

export interface CountersTable {
  name: string;
  value: number;
}

export interface OutboxTable {
  id: Generated<number>;
  user_id: string | null;
  channel: string;
  kind: string;
  payload: string;
  created_at: number;
  sent_at: number | null;
  device_id: string | null;
  topic: string | null;
  attempts: Generated<number>;
  next_attempt_at: Generated<number>;
  expires_at: number | null;
  locked_by: string | null;
  locked_until: number | null;
  failed_at: number | null;
  last_error: string | null;
}

export interface PushDevicesTable {
  id: string;
  user_id: string;
  /** 'webpush' | 'fcm' */
  kind: string;
  address: string;
  p256dh: string | null;
  auth: string | null;
  name: string;
  created_at: number;
  last_used_at: number | null;
  /** Sends that failed in a row (timeouts, network errors, 5xx); a delivered push resets it. */
  failures: Generated<number>;
  /** Damped: its messages wait until then (migration 015). */
  damped_until: number | null;
}

export interface NotificationsTable {
  seq: Generated<number>;
  id: string;
  user_id: string;
  type: string;
  title: string;
  body: string;
  created_at: number;
  read_at: number | null;
  txn_id: string | null;
  takeover_id: string | null;
}

export interface NotifySettingsTable {
  user_id: string;
  approvals: number;
  notes: number;
  session_notices: number;
  quiet_start: string | null;
  quiet_end: string | null;
  quiet_tz: string | null;
  updated_at: number;
}

export interface ServiceSecretsTable {
  name: string;
  value: string;
  encrypted: number;
  created_at: number;
}

export interface AuthzRequestsTable {
  id: string;
  kind: string;
  agent_id: string;
  user_id: string;
  site: string;
  scopes: string;
  user_info: string;
  action: string | null;
  status: string;
  created_at: number;
  expires_at: number;
  decided_at: number | null;
  grant_id: string | null;
  /** JSON (migration 010): the sign-in context of a request filed by the OIDC provider. */
  oidc: string | null;
  /** JSON (migration 021): the details of an agent approval. */
  details: string | null;
  /** Migration 030: the details a step-up or agent approval is bound to (decisions §29); both or neither. */
  details_summary: string | null;
  details_digest: string | null;
  /** Migration 032: `site` for a step-up the site filed (POST /api/v1/stepup/site); null: the agent. */
  filed_by: string | null;
}

export interface GrantsTable {
  id: string;
  user_id: string;
  agent_id: string;
  site: string;
  scopes: string;
  user_info: string;
  status: string;
  created_at: number;
  expires_at: number | null;
  uses_left: number | null;
  refresh_hash: string | null;
  passes_issued: number;
  revoked_at: number | null;
  rev_seq: number | null;
  /** When a newer approval superseded the grant (migration 004). */
  superseded_at: number | null;
  /** The resource URL an app's grant is for (migration 033); null otherwise. */
  resource: string | null;
}

export interface ReportsTable {
  agent_id: string;
  site: string;
  kind: string;
  detail: string;
  created_at: number;
}

export interface AgentStatusesTable {
  agent_id: string;
  site: string;
  status: string;
  created_at: number;
}

export interface ActivityTable {
  /** Global insertion order (internal; PostgreSQL may skip numbers on rollback). */
  seq: Generated<number>;
  /** The owner's gap-free sequence, the `seq` owners see (migration 005). */
  owner_seq: number;
  user_id: string;
  agent_id: string | null;
  site: string | null;
  action: string;
  detail: string;
  ip: string | null;
  created_at: number;
}

/** Background-work leases (migration 005): one holder per name until `expires_at`. */
export interface LeasesTable {
  name: string;
  holder: string;
  expires_at: number;
}

/** OIDC clients (migration 008); JSON arrays as text, `is_public` 0/1. */
export interface OidcClientsTable {
  id: string;
  user_id: string;
  name: string;
  redirect_uris: string;
  backchannel_logout_uri: string | null;
  is_public: number;
  secret_hash: string | null;
  secret_set_at: number | null;
  verification_token: string;
  verified_origins: string;
  verified_at: number | null;
  created_at: number;
  updated_at: number;
}

/** Self-registered public clients (migration 031); `redirect_uris` a JSON array as text. */
export interface OidcRegisteredClientsTable {
  id: string;
  name: string;
  redirect_uris: string;
  client_uri: string | null;
  logo_uri: string | null;
  created_at: number;
}

/** OIDC sign-ins (migration 009); `scopes` and `amr` JSON arrays as text. */
export interface OidcSignInsTable {
  sid: string;
  client_id: string;
  user_id: string;
  agent_id: string;
  grant_id: string;
  site: string;
  scopes: string;
  amr: string;
  auth_time: number;
  refresh_hash: string;
  created_at: number;
  expires_at: number;
  ended_at: number | null;
  dpop_jkt: string | null;
  refresh_window_at: number | null;
  refresh_count: number;
  /** The resource a browser sign-in was approved for (migration 033); null otherwise. */
  resource: string | null;
}

/** Pairwise agent subjects given to sites (migration 010). */
export interface OidcSubjectsTable {
  client_id: string;
  site: string;
  pairwise: string;
  agent_id: string;
  created_at: number;
}

/** CIBA requests (migration 010); `scopes` a JSON array as text. */
export interface OidcCibaTable {
  id_hash: string;
  client_id: string;
  txn_id: string;
  agent_id: string;
  user_id: string;
  site: string;
  scopes: string;
  interval_sec: number;
  last_poll_at: number | null;
  consumed_at: number | null;
  created_at: number;
  expires_at: number;
}

/** Links mailed to owners (migration 011): keyed by the token's SHA-256; single-use by `used_at`. */
export interface EmailTokensTable {
  token_hash: string;
  purpose: string;
  user_id: string;
  email: string;
  subject: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** Address take-over claims (migration 017): keyed by the token's SHA-256; single-use by `used_at`. */
export interface EmailClaimsTable {
  token_hash: string;
  email: string;
  password_hash: string;
  display_name: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** SMS codes: verifying a phone, starting a recovery (migration 019). */
export interface PhoneCodesTable {
  id: string;
  user_id: string | null;
  purpose: string;
  phone: string;
  code_hash: string;
  attempts_left: number;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** One-time recovery codes, hashed (migration 019). */
export interface RecoveryCodesTable {
  code_hash: string;
  user_id: string;
  created_at: number;
  used_at: number | null;
}

/** Identities at identity providers linked to owner accounts (migration 020): one per (issuer, subject). */
export interface OAuthIdentitiesTable {
  issuer: string;
  subject: string;
  user_id: string;
  provider: string;
  created_at: number;
}

/** Identity-provider flows under way (migration 020): keyed by the state's SHA-256; single-use by `used_at`. */
export interface OAuthStatesTable {
  state_hash: string;
  purpose: string;
  provider: string;
  user_id: string | null;
  txn_id: string | null;
  /** JSON of the approval's limits, or null. */
  limits: string | null;
  /** SHA-256 of the browser-binding cookie; null for approvals (their callback may come from another browser). */
  browser_hash: string | null;
  nonce: string;
  code_verifier: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** Take-over sessions (migration 023): the agent's relay token only as a SHA-256; one open per agent. */
export interface TakeoversTable {
  id: string;
  agent_id: string;
  user_id: string;
  url: string;
  reason: string;
  token_hash: string;
  state: string;
  relay_node: string | null;
  created_at: number;
  expires_at: number;
  ended_at: number | null;
}

/** Sites where a take-over failed, as agents reported them (migration 023). */
export interface TakeoverReportsTable {
  id: string;
  agent_id: string;
  user_id: string;
  site: string;
  kind: string;
  detail: string | null;
  url: string | null;
  created_at: number;
}

export interface PlansTable {
  id: string;
  user_id: string;
  agent_id: string;
  txn_id: string;
  title: string;
  start_at: number;
  end_at: number;
  status: string;
  created_at: number;
  decided_at: number | null;
}

export interface PlanStepsTable {
  plan_id: string;
  step_id: string;
  position: number;
  url: string;
  host: string;
  path: string | null;
  button: string;
  category: string;
  /** JSON list of lowercase hex digests. */
  text_digests: string;
  /** JSON list of earlier step ids. */
  after_ids: string;
  uses: number;
  uses_left: number;
  approved: number;
  state: string;
  reason: string | null;
}

export interface PlanUsesTable {
  txn_id: string;
  plan_id: string;
  step_id: string;
  created_at: number;
}

/** Migration 021: approval modes per agent and site (`*`: the agent's default). */
export interface ApprovalModesTable {
  agent_id: string;
  site: string;
  mode: string;
  hourly_limit: number;
}

export interface ApprovalPauseScopesTable {
  agent_id: string;
  pause_scope: string;
}

/** Operators (migration 024): the secret only as a SHA-256; `redirect_uris` is a JSON list. */
export interface OperatorsTable {
  id: string;
  user_id: string;
  name: string;
  domain: string;
  redirect_uris: string;
  browser: string;
  secret_hash: string;
  secret_set_at: number;
  status: string;
  verification_token: string;
  verified_at: number | null;
  status_changed_at: number | null;
  created_at: number;
  updated_at: number;
}

/** A user's consent to an operator (migration 024); `sub` is pairwise per operator. */
export interface OperatorConnectionsTable {
  id: string;
  operator_id: string;
  user_id: string;
  sub: string;
  max_agents: number;
  status: string;
  created_at: number;
  ended_at: number | null;
}

/** A consent's single-use code (migration 026): only its SHA-256; spent by setting `used_at`. */
export interface OperatorCodesTable {
  code_hash: string;
  operator_id: string;
  user_id: string;
  redirect_uri: string;
  code_challenge: string;
  expires_at: number;
  used_at: number | null;
  connection_id: string | null;
}

/** Migration 029: the readiness cache, one row per site. */
export interface ReadinessChecksTable {
  site: string;
  report: string;
  checked_at: number;
  expires_at: number;
}

/** Web Bot Auth keys (migration 028): one public Ed25519 key per agent and its directory signature. */
export interface WbaKeysTable {
  agent_id: string;
  user_id: string;
  label: string;
  kid: string;
  x: string;
  created_at: number;
  updated_at: number;
  proof_content_digest: string | null;
  proof_signature_input: string | null;
  proof_signature: string | null;
  proof_expires_at: number | null;
}

/** Migration 030: the receipt of a passkey approval (ports/receipts.ts), one per approved request. */
export interface ApprovalReceiptsTable {
  txn_id: string;
  user_id: string;
  agent_id: string;
  site: string;
  action: string;
  details_digest: string | null;
  nonce: string;
  approved_at: number;
  credential_id: string;
  authenticator_data: string;
  client_data_json: string;
  signature: string;
}
