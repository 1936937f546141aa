import type { PasswordManagerSetting, Store } from '../../store/ports/index.ts';
import type { Activity } from '../activity/activity.ts';
import type { Agents } from './agents.ts';
import { badRequest } from '../errors.ts';

/**
 * The password-manager switch (issue 24, decisions §17). An agent whose browser runs on its
 * operator's computers may list, fill or save secrets only while its owner has turned the password
 * manager on for it: off by default, so secrets never reach an operator's machine unasked. Agents
 * without an operator, and those whose browser runs on the owner's own machine, are not affected.
 */
export type PasswordManagerState = 'on' | 'off' | 'not_applicable';

/** What `GET /api/v1/agent-status` says; an unknown setting (no such row) reads as not applicable. */
export function passwordManagerState(setting: PasswordManagerSetting | undefined): PasswordManagerState {
  if (setting?.browser !== 'operator') return 'not_applicable';
  return setting.enabled ? 'on' : 'off';
}

export interface PasswordManagerDeps {
  store: Store;
  agents: Agents;
  activity: Activity;
}

/**
 * `POST /api/agents/{agent_id}/password-manager`: the owner turns it on or off. 404 for an agent
 * that is not the owner's (or removed), 400 for one whose browser does not run on its operator's
 * computers. Leaves one `agent.password_manager` record in Activity, also when nothing changed (the
 * owner's click is what the trail records).
 */
export async function switchPasswordManager(d: PasswordManagerDeps, userId: string, agentId: string, enabled: boolean, ip: string | null = null): Promise<{ agent_id: string; password_manager: PasswordManagerState }> {
  const agent = await d.agents.owned(userId, agentId);
  const setting = await d.store.agents.passwordManager(agent.id);
  if (setting?.browser !== 'operator') {
    throw badRequest('the password-manager switch is only for agents whose browser runs on their operator\'s computers (browser "operator"); this agent\'s password manager is not restricted');
  }
  await d.store.transaction(async (repos) => {
    await repos.agents.setPasswordManager(agent.id, enabled);
    await d.activity.record({ userId, action: 'agent.password_manager', agentId: agent.id, detail: { enabled }, ip }, repos.activity);
  });
  return { agent_id: agent.id, password_manager: enabled ? 'on' : 'off' };
}
