/**
 * Ports for reaching the owner (decisions §13): notifying devices, the notification inbox, the
 * owner's notification settings, the delivery queue (outbox) and the service's own secrets.
 * Times are epoch milliseconds.
 */

export type PushDeviceKind = 'webpush' | 'fcm';

export interface PushDeviceRecord {
  id: string;
  userId: string;
  kind: PushDeviceKind;
  /** The web-push endpoint URL, or the FCM registration token. */
  address: string;
  /** Web push only: the subscription's keys (base64url). */
  p256dh: string | null;
  auth: string | null;
  name: string;
  createdAt: number;
  /** When a push to it was last accepted by its push service. */
  lastUsedAt: number | null;
  /** Sends that failed in a row (timeouts, network errors, 5xx): 0 after a delivered push. */
  failures: number;
  /** While damped, its messages wait until then (delivery/damping.ts); null: not damped. */
  dampedUntil: number | null;
}

export interface PushDevicesRepo {
  /**
   * Inserts, or when a device of that kind and address exists (a browser subscribing again, or a
   * phone now signed in to another account) updates it in place: owner, keys and name, keeping its
   * id. One statement (INSERT ... ON CONFLICT), so racing registrations of one address leave one row.
   */
  upsert(device: Omit<PushDeviceRecord, 'failures' | 'dampedUntil'>): Promise<PushDeviceRecord>;
  byId(id: string): Promise<PushDeviceRecord | undefined>;
  listForUser(userId: string): Promise<PushDeviceRecord[]>;
  /** Removes the owner's device; false when it is not theirs or does not exist. */
  delete(userId: string, id: string): Promise<boolean>;
  /** Removes the owner's web-push device with that endpoint, or all of them when `endpoint` is null. */
  deleteWebPush(userId: string, endpoint: string | null): Promise<PushDeviceRecord[]>;
  /** Removes a device whatever its owner (its push service said it is gone). */
  deleteById(id: string): Promise<boolean>;
  /** Removes every device of `userId`, whatever its kind (account deletion); answers how many. */
  deleteForUser(userId: string): Promise<number>;
  /** A push was accepted: `lastUsedAt`, and the device is no longer failing or damped. */
  touch(id: string, at: number): Promise<void>;
  /**
   * One more failed send in a row; answers the new count (undefined: no such device). One statement
   * (`failures = failures + 1`), so failures seen by racing nodes all count.
   */
  recordFailure(id: string): Promise<number | undefined>;
  /** Damps the device until `until` (never shortens a longer damping already set). */
  damp(id: string, until: number): Promise<void>;
}

export type NotificationType = 'approval' | 'note' | 'agent_added' | 'takeover' | 'auto_approved' | 'security';

export interface NotificationRecord {
  id: string;
  /** Set by the store: global, increasing; pages go by it. */
  seq: number;
  userId: string;
  type: NotificationType;
  title: string;
  body: string;
  createdAt: number;
  readAt: number | null;
  txnId: string | null;
  takeoverId: string | null;
}

export type NotificationMarks = { all: true } | { ids: string[] } | { txnIds: string[] } | { takeoverIds: string[] };

export interface NotificationsRepo {
  add(n: Omit<NotificationRecord, 'seq'>): Promise<NotificationRecord>;
  /** Newest first: seq below `before` (0: from the newest), created at or after `since`. */
  list(userId: string, q: { before: number; limit: number; since: number }): Promise<NotificationRecord[]>;
  unreadCount(userId: string, since: number): Promise<number>;
  /** Marks the owner's unread notifications read; answers how many changed. */
  markRead(userId: string, marks: NotificationMarks, at: number): Promise<number>;
  purgeOlderThan(before: number): Promise<number>;
  /** Deletes every notification of `userId`, read or not (account deletion); answers how many. */
  deleteForUser(userId: string): Promise<number>;
}

export interface QuietHours {
  /** "HH:MM", 24-hour, in `tz`. */
  start: string;
  end: string;
  /** IANA time zone, e.g. Europe/Paris. */
  tz: string;
}

export interface NotifySettingsRecord {
  userId: string;
  approvals: boolean;
  notes: boolean;
  sessionNotices: boolean;
  quietHours: QuietHours | null;
  updatedAt: number;
}

export interface NotifySettingsRepo {
  get(userId: string): Promise<NotifySettingsRecord | undefined>;
  put(settings: NotifySettingsRecord): Promise<void>;
  /** Forgets the owner's settings (account deletion). */
  deleteForUser(userId: string): Promise<void>;
}

export interface OutboxMessage {
  id: number;
  userId: string | null;
  /** How it is sent: `webpush`, `fcm` (later `sms`, `email`, `backchannel`). */
  channel: string;
  /** What it is: the push `type` (approval, dismiss, note, ...). */
  kind: string;
  payload: Record<string, unknown>;
  createdAt: number;
  sentAt: number | null;
  deviceId: string | null;
  topic: string | null;
  attempts: number;
  nextAttemptAt: number;
  /** After this the message is pointless (the request it is about has expired): not retried. */
  expiresAt: number | null;
  failedAt: number | null;
  lastError: string | null;
}

export type NewOutboxMessage = Pick<OutboxMessage, 'userId' | 'channel' | 'kind' | 'payload' | 'createdAt'> &
  Partial<Pick<OutboxMessage, 'deviceId' | 'topic' | 'nextAttemptAt' | 'expiresAt'>>;

export interface ClaimFairness {
  /** Most messages of one owner under live claims at once, across nodes. */
  perOwner: number;
}

export type OutboxEnd = { sentAt: number } | { failedAt: number; error: string } | { retryAt: number; error: string };

export interface OutboxRepo {
  add(message: NewOutboxMessage): Promise<number>;
  addMany(messages: readonly NewOutboxMessage[]): Promise<void>;
  list(filter: { userId?: string; kind?: string; topic?: string; limit?: number }): Promise<OutboxMessage[]>;
  /**
   * Claims up to `limit` messages due at `now` (unsent, not failed, not claimed by a live claim) for
   * `holder` until `now + leaseMs`, counting an attempt. One statement (PostgreSQL: FOR UPDATE SKIP
   * LOCKED): of racing holders on any number of nodes, each message goes to one. A holder that dies
   * mid-send loses the claim when it runs out; the message is then claimed again (at least once).
   *
   * Fair between owners (issue 22): the claim takes each owner's first message before any owner's
   * second, and so on (round-robin, oldest owners' turns first); within an owner, decisions
   * (`approval`, `dismiss`, `takeover`, `test`) and back-channel logouts before the rest, and each device's first message
   * before any device's second. With `fairness.perOwner`, an owner's messages under live claims (any
   * node's, not yet finished) plus those claimed now never exceed it: one owner cannot fill the
   * senders. A back-channel logout takes the turns of its relying party (client), not of the owner:
   * the client's owner chose its address.
   */
  claimDue(holder: string, now: number, leaseMs: number, limit: number, fairness?: ClaimFairness): Promise<OutboxMessage[]>;
  /** Ends `holder`'s claim: sent, failed for good, or due again at `retryAt`. False when the claim was lost. */
  finish(id: number, holder: string, end: OutboxEnd): Promise<boolean>;
  /**
   * An answered request: its unsent, unclaimed messages of kind `cancel` end (their news is stale),
   * those being sent expire at `now` (never retried), and its messages of kind `expedite` become
   * due at `now`.
   */
  settleTopic(topic: string, now: number, kinds: { cancel: string; expedite: string }): Promise<void>;
  /** Ends the unsent messages to a removed device. */
  cancelForDevice(deviceId: string, now: number, error: string): Promise<number>;
  /**
   * A damped device (of owner `userId`): its unsent messages due before `until` become due at
   * `until` (not an attempt). Answers how many moved.
   */
  deferForDevice(userId: string, deviceId: string, until: number): Promise<number>;
  /**
   * The owner's budget of undelivered messages of `kind`: beyond the newest `keep` unsent,
   * unclaimed ones, the older ones end as failed with `error`. Answers how many were dropped.
   */
  dropOverBudget(userId: string, kind: string, keep: number, now: number, error: string): Promise<number>;
  /** Deletes messages that ended (sent or failed) before `before`. */
  purgeEnded(before: number): Promise<number>;
  /** Messages neither sent nor failed (due, claimed, or waiting for a retry): the metrics' backlog. */
  countPending(): Promise<number>;
  /**
   * Account deletion: deletes the owner's messages not yet sent (due, claimed or waiting for a
   * retry; a claimed one's `finish` then answers false), except those on `keepChannels` (the
   * back-channel logouts the deletion itself queued). Answers how many.
   */
  deletePendingForUser(userId: string, keepChannels: readonly string[]): Promise<number>;
}

export interface ServiceSecretRecord {
  name: string;
  /** JSON, or its ciphertext when `encrypted`. */
  value: string;
  encrypted: boolean;
  createdAt: number;
}

export interface ServiceSecretsRepo {
  /** Inserts unless the name exists; answers the stored record (the first writer's, when nodes race). */
  putIfAbsent(secret: ServiceSecretRecord): Promise<ServiceSecretRecord>;
  get(name: string): Promise<ServiceSecretRecord | undefined>;
  replace(name: string, value: string, encrypted: boolean): Promise<void>;
}
