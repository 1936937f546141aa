/**
 * The erasure steps of the concepts the service has today, in the order they run (decisions §16,
 * interface.md "account" row). Agents go first: removing them runs the agent-stopped hooks (requests
 * cancelled, grants revoked, OIDC sign-ins ended with back-channel logouts) at new `rev_seq`s; the
 * steps after them sweep up anything those hooks did not reach, then delete what the owner holds.
 * `profile` is last: it replaces the email, which earlier steps may still look things up by.
 */
import { randomToken, sha256Hex } from '../../crypto/random.ts';
import type { Agents } from '../agents/agents.ts';
import { BACKCHANNEL_CHANNEL } from '../oidc/logout.ts';
import { RevocationSequence } from '../revocation/rev-seq.ts';
import type { Repos } from '../../store/ports/index.ts';
import { type ErasureStep, erasureStep } from './erasure.ts';

/** Where an erased account's email goes: `.invalid` never resolves (RFC 2606); the random part is never told. */
export const ERASED_DOMAIN = 'invalid';
export const erasedEmail = (): string => `deleted-${sha256Hex(randomToken()).slice(0, 32)}@${ERASED_DOMAIN}`;

/** The step that must stay last (AccountDeletion.addStep inserts before it). */
export const PROFILE_STEP = 'profile';

export interface StandardStepDeps {
  agents: Pick<Agents, 'removeAllWithin'>;
  /** Ends one OIDC sign-in and queues its back-channel logout in `repos` (oidc/sign-in-end.ts endSignIn). */
  endSignIn: (repos: Repos, sid: string, now: number) => Promise<boolean>;
}

export function standardErasureSteps(deps: StandardStepDeps): ErasureStep[] {
  return [
    // Tombstoned, so cloud verify, the revocation list, the token endpoint and OIDC refuse them at once.
    erasureStep('agents', (c) => deps.agents.removeAllWithin(c.repos, c.user.id)),
    // An agent removed earlier left no live grant; anything still live is revoked at one new rev_seq.
    erasureStep('grants', async ({ repos, user, now }) => {
      const live = await repos.grants.listActiveForUser(user.id);
      if (live.length === 0) return;
      const revSeq = await new RevocationSequence(repos.counters).advance();
      for (const g of live) await repos.grants.revoke(g.id, now, revSeq);
    }),
    erasureStep('requests', async ({ repos, user, now }) => {
      const open = await repos.authzRequests.listPendingForUser(user.id, now);
      for (const agentId of new Set(open.map((r) => r.agentId))) await repos.authzRequests.cancelPendingForAgent(agentId, now);
    }),
    // Plans and their steps (decisions §20): after the requests step closed their open cards.
    erasureStep('plans', (c) => c.repos.plans.deleteForUser(c.user.id)),
    erasureStep('oidc-sign-ins', async ({ repos, user, now }) => {
      for (const s of await repos.oidcSignIns.listLiveForUser(user.id, now)) await deps.endSignIn(repos, s.sid, now);
    }),
    // Approval modes of every agent the owner had (decisions §19).
    erasureStep('approval-modes', async ({ repos, user }) => {
      for (const a of await repos.agents.listForUser(user.id, true)) await repos.approvalModes.removeAgent(a.id);
    }),
    erasureStep('sessions', (c) => c.repos.sessions.deleteForUser(c.user.id)),
    erasureStep('passkeys', (c) => c.repos.passkeys.deleteForUser(c.user.id)),
    // Phone verification and recovery-start codes, then the one-time recovery codes (decisions §14).
    erasureStep('phone-codes', (c) => c.repos.phoneCodes.deleteForUser(c.user.id)),
    erasureStep('recovery-codes', (c) => c.repos.recoveryCodes.deleteForUser(c.user.id)),
    // Linked identity-provider accounts, and their flows under way (decisions §15).
    erasureStep('identity-providers', async (c) => {
      await c.repos.oauthIdentities.deleteForUser(c.user.id);
      await c.repos.oauthStates.deleteForUser(c.user.id);
    }),
    // Take-over sessions (an open one's relay token stops working) and the agents' reports (decisions §21).
    erasureStep('takeovers', (c) => c.repos.takeovers.deleteForUser(c.user.id)),
    // Web Bot Auth keys and their directory signatures (decisions §22): the agents' addresses serve no keys.
    erasureStep('wba-keys', (c) => c.repos.wbaKeys.deleteForUser(c.user.id)),
    // Operators the person registered (decisions §17): the agents they made for other people are
    // blocked as an admin's off blocks them (no operator is left to switch them on again; their
    // owners can remove them), then the operators and every connection to or of the person go.
    erasureStep('operators', async ({ repos, user, now }) => {
      const operators = await repos.operators.listForUser(user.id);
      if (operators.length > 0) {
        const revSeq = await new RevocationSequence(repos.counters).advance();
        for (const o of operators) await repos.operators.blockAgents(o.id, revSeq, now);
      }
      await repos.operators.deleteForUser(user.id);
    }),
    erasureStep('devices', (c) => c.repos.pushDevices.deleteForUser(c.user.id)),
    erasureStep('email-links', (c) => c.repos.emailTokens.deleteForUser(c.user.id)),
    erasureStep('notify-settings', (c) => c.repos.notifySettings.deleteForUser(c.user.id)),
    erasureStep('notifications', (c) => c.repos.notifications.deleteForUser(c.user.id)),
    // After the agents step: the pushes its hooks queued go too; the logouts it queued stay.
    erasureStep('outbox', (c) => c.repos.outbox.deletePendingForUser(c.user.id, [BACKCHANNEL_CHANNEL])),
    // Receipts name the person and hold their passkey's signature (decisions §29): they go with the
    // account; the sites keep the copies they fetched, and the anonymised activity keeps the approvals.
    erasureStep('receipts', (c) => c.repos.receipts.anonymiseForUser(c.user.id)),
    // The bare sequence stays, closed by one record that says the account was deleted.
    erasureStep('activity', async ({ repos, user, now }) => {
      await repos.activity.anonymiseForUser(user.id);
      await repos.activity.add({ userId: user.id, agentId: null, site: null, action: 'account.deleted', detail: {}, ip: null, createdAt: now });
    }),
    // Email (to a placeholder, so the address can sign up again), display name, password hash, phone.
    erasureStep(PROFILE_STEP, (c) => c.repos.users.erase(c.user.id, erasedEmail())),
  ];
}
