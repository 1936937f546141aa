import type { ActivityRecord, ActivityRepo } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';

/**
 * The names of audit events. Every approval, denial, pass issuance, step-up, revocation, note and
 * report leaves one record in the owner's trail. A list, not only a type, so the owner app's test can
 * check that it words every one of them.
 */
export const ACTIVITY_ACTIONS = [
  'request.created',
  'request.approved',
  'request.denied',
  'request.expired',
  'stepup.requested',
  'stepup.approved',
  'stepup.denied',
  'stepup.delivered',
  'stepup.used',
  'agent_approval.requested',
  'agent_approval.approved',
  'agent_approval.denied',
  'agent_approval.auto_approved',
  'approval_mode.changed',
  'pass.issued',
  'grant.revoked',
  'grant.user_info_narrowed',
  'agent.created',
  'agent.removed',
  'agent.flagged',
  'agent.note',
  'agent.status',
  'agent.password_manager',
  'report.received',
  'oidc.sign_in',
  'phone.code_sent',
  'phone.verified',
  'phone.removed',
  'recovery.codes_generated',
  'recovery.started',
  'recovery.completed',
  'recovery.failed',
  'recovery.attempts_exhausted',
  'oauth.linked',
  'oauth.unlinked',
  'oauth.sign_in',
  'takeover.requested',
  'takeover.ended',
  'takeover.reported',
  'plan.submitted',
  'plan.approved',
  'plan.denied',
  'plan.withdrawn',
  'plan.step_used',
  'plan.step_result',
  'operator.registered',
  'operator.verified',
  'operator.secret_rotated',
  'operator.switched',
  'operator.consented',
  'operator.consent_denied',
  'operator.connected',
  'operator.connection_ended',
  'operator.connection_limit',
  'app.approved',
  'app.denied',
] as const;

export type ActivityAction = (typeof ACTIVITY_ACTIONS)[number];

export interface ActivityEvent {
  userId: string;
  action: ActivityAction;
  agentId?: string | null;
  site?: string | null;
  detail?: Record<string, unknown>;
  ip?: string | null;
}

/** Writes audit records; a thin layer so callers never build rows by hand. */
export class Activity {
  constructor(private readonly repo: ActivityRepo, private readonly clock: Clock) {}

  record(event: ActivityEvent, repo: ActivityRepo = this.repo): Promise<number> {
    return repo.add({
      userId: event.userId,
      action: event.action,
      agentId: event.agentId ?? null,
      site: event.site ?? null,
      detail: event.detail ?? {},
      ip: event.ip ?? null,
      createdAt: this.clock.now(),
    });
  }

  list(userId: string, query: { before: number; limit: number; agentId?: string; site?: string; action?: string }): Promise<ActivityRecord[]> {
    return this.repo.list(userId, query);
  }
}
