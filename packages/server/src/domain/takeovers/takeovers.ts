import type { AgentRecord, Store, TakeoverRecord, TakeoverReportKind, TakeoverReportRecord, TakeoverState } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import type { Activity } from '../activity/activity.ts';
import type { Notifier } from '../notifications/notifier.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { randomToken, sha256Hex } from '../../crypto/random.ts';
import { sameHash } from '../../crypto/one-time-codes.ts';
import { conflict, notFound, unauthorized } from '../errors.ts';
import { looksLikeId, newId } from '../ids.ts';

/** A take-over lasts 10 minutes at most (decisions §21). */
export const TAKEOVER_TTL_SEC = 600;
/** Requests per agent per hour: a stuck agent retrying cannot flood the owner's phone. */
export const TAKEOVERS_PER_HOUR = 20;
/** Reports per agent per hour. */
export const REPORTS_PER_HOUR = 60;
/** Reports listed at most. */
export const REPORTS_LISTED = 100;

export interface TakeoverReportIn {
  site: string;
  kind: TakeoverReportKind;
  detail: string | null;
  url: string | null;
}

/**
 * Take-over sessions (decisions §21): an agent asks its owner to steer its browser for up to ten
 * minutes. The agent gets a random relay token (stored as a SHA-256 only); the owner gets a
 * `takeover` push and card. The relay (http/takeover-relay) asks this class who may connect and
 * tells it how a session ended; each end is recorded in Activity.
 */
export class Takeovers {
  private readonly ended: ((id: string, state: Exclude<TakeoverState, 'open'>) => void)[] = [];

  constructor(private readonly store: Store, private readonly clock: Clock, private readonly activity: Activity, private readonly notifier: Notifier, private readonly limiter: RateLimiter) {}

  /** The relay listens: a session ended here (a cancel, a time-out) closes its sockets. */
  onEnded(listener: (id: string, state: Exclude<TakeoverState, 'open'>) => void): void {
    this.ended.push(listener);
  }

  async request(agent: AgentRecord, input: { url: string; reason: string }, ip: string | null): Promise<{ takeoverId: string; agentToken: string; expiresIn: number }> {
    await this.limiter.check(`takeover:${agent.id}`, TAKEOVERS_PER_HOUR, 3600);
    const now = this.clock.now();
    const id = newId('tk');
    const agentToken = randomToken(32);
    const expiresAt = now + TAKEOVER_TTL_SEC * 1000;
    const opened = await this.store.takeovers.open({ id, agentId: agent.id, userId: agent.userId, url: input.url, reason: input.reason, tokenHash: sha256Hex(agentToken), createdAt: now, expiresAt }, now);
    if (!opened) throw conflict('this agent already has an open take-over', { next_step: 'finish or wait for the open take-over (at most 10 minutes), or ask the owner to cancel it' });
    await this.activity.record({ userId: agent.userId, action: 'takeover.requested', agentId: agent.id, site: siteOf(input.url), detail: { takeover_id: id, url: input.url, reason: input.reason }, ip });
    await this.notifier.takeoverRequested(agent.userId, { takeoverId: id, agentName: agent.name, url: input.url, reason: input.reason, expiresAt });
    return { takeoverId: id, agentToken, expiresIn: TAKEOVER_TTL_SEC };
  }

  /** The owner's open sessions. */
  active(userId: string): Promise<TakeoverRecord[]> {
    return this.store.takeovers.activeForUser(userId, this.clock.now());
  }

  /** The owner's open session `sid`; anything else (another owner's, ended, unknown) is 404. */
  async ownedOpen(userId: string, sid: string): Promise<TakeoverRecord> {
    const t = looksLikeId('tk', sid) ? await this.store.takeovers.byId(sid) : undefined;
    if (!t || t.userId !== userId) throw notFound('take-over not found');
    if (!this.isOpen(t)) throw notFound('take-over ended');
    return t;
  }

  /** The session `sid` if `token` is its agent token and it is open; fails closed otherwise (401). */
  async forAgent(sid: string, token: string): Promise<TakeoverRecord> {
    const t = looksLikeId('tk', sid) ? await this.store.takeovers.byId(sid) : undefined;
    // Compared as hashes in constant time; an unknown session compares against a dummy alike.
    const match = sameHash(sha256Hex(token), t?.tokenHash ?? sha256Hex(''));
    if (!t || !match) throw unauthorized('invalid take-over token');
    if (!this.isOpen(t)) throw unauthorized('take-over ended');
    return t;
  }

  async cancel(userId: string, sid: string, ip: string | null): Promise<void> {
    const t = await this.ownedOpen(userId, sid);
    await this.end(t, 'cancelled', ip);
  }

  /** Ends the session once (of racing enders exactly one records it); answers whether this call ended it. */
  async end(t: TakeoverRecord, state: Exclude<TakeoverState, 'open'>, ip: string | null = null): Promise<boolean> {
    const ended = await this.store.takeovers.end(t.id, state, this.clock.now());
    if (ended) {
      await this.activity.record({ userId: t.userId, action: 'takeover.ended', agentId: t.agentId, site: siteOf(t.url), detail: { takeover_id: t.id, state }, ip });
      await this.store.notifications.markRead(t.userId, { takeoverIds: [t.id] }, this.clock.now());
      for (const l of this.ended) l(t.id, state);
    }
    return ended;
  }

  /** Ends sessions whose ten minutes ran out (their sockets are closed by the relay's own timers). */
  async expireDue(limit = 100): Promise<number> {
    let n = 0;
    for (const t of await this.store.takeovers.expiredOpen(this.clock.now(), limit)) if (await this.end(t, 'expired')) n++;
    return n;
  }

  /** Where session `id` is relayed (decisions §21): `node` unless another node was first; undefined once it is not open. */
  claimRelayNode(id: string, node: string): Promise<string | undefined> {
    return this.store.takeovers.claimRelayNode(id, node);
  }

  /** Takes the relay of session `id` over from an unreachable node: one compare-and-set. */
  moveRelayNode(id: string, from: string, to: string): Promise<boolean> {
    return this.store.takeovers.moveRelayNode(id, from, to);
  }

  async relayNodeOf(id: string): Promise<string | null> {
    return (await this.store.takeovers.byId(id))?.relayNode ?? null;
  }

  /** The stored state of each listed session that still exists. */
  statesOf(ids: readonly string[]): Promise<Map<string, TakeoverState>> {
    return this.store.takeovers.statesOf(ids);
  }

  /** Milliseconds until the session's time is up, by the service clock. */
  remainingMs(t: TakeoverRecord): number {
    return Math.max(0, t.expiresAt - this.clock.now());
  }

  isOpen(t: TakeoverRecord): boolean {
    return t.state === 'open' && t.expiresAt > this.clock.now();
  }

  async report(agent: AgentRecord, input: TakeoverReportIn, ip: string | null): Promise<string> {
    await this.limiter.check(`takeover-report:${agent.id}`, REPORTS_PER_HOUR, 3600);
    const id = newId('tk').replace(/^tk_/, 'tkr_');
    const r: TakeoverReportRecord = { id, agentId: agent.id, userId: agent.userId, site: input.site, kind: input.kind, detail: input.detail, url: input.url, createdAt: this.clock.now() };
    await this.store.takeovers.addReport(r);
    await this.activity.record({ userId: agent.userId, action: 'takeover.reported', agentId: agent.id, site: input.site, detail: { report_id: id, kind: input.kind }, ip });
    return id;
  }

  reports(userId: string): Promise<TakeoverReportRecord[]> {
    return this.store.takeovers.reportsForUser(userId, REPORTS_LISTED);
  }
}

/** The host of a URL (Activity's `site`), or the text itself when it is not one. */
export function siteOf(url: string): string {
  try {
    return new URL(url).host || url.slice(0, 200);
  } catch {
    return url.slice(0, 200);
  }
}
