import type { Notifier } from './notifications/notifier.ts';
import type { AgentRecord } from '../store/ports/index.ts';
import type { Activity } from './activity/activity.ts';
import type { RateLimiter } from './rate-limit.ts';

export interface AgentNote {
  title: string;
  text: string;
  /** A short token such as `done`, `stuck`, `summary` or `agent`. */
  kind: string;
}

/** Notes per agent per minute: enough for a chatty agent, too few to bury the owner's phone. */
export const NOTES_PER_MINUTE = 30;

/**
 * One-way notes from an agent to its owner's phone (`POST /api/v1/agent-notify`): nothing to
 * approve; each note goes to the owner's inbox and devices (notifications/notifier.ts) and into the
 * activity trail.
 */
export class AgentNotes {
  constructor(private readonly activity: Activity, private readonly notifier: Notifier, private readonly limiter: RateLimiter) {}

  /** The agent is already authenticated, so only its own notes use up its limit. */
  /** Answers where the note went (the inbox, and how many devices it is pushed to). */
  async send(agent: AgentRecord, note: AgentNote, ip: string | null): Promise<{ inbox: boolean; devices: number }> {
    await this.limiter.check(`agent-notify:${agent.id}`, NOTES_PER_MINUTE, 60);
    await this.activity.record({ userId: agent.userId, action: 'agent.note', agentId: agent.id, detail: { ...note }, ip });
    return this.notifier.agentNote(agent.userId, agent.name, note);
  }
}
