import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.ts';
import { metaRoutes } from './meta.ts';
import { accountRoutes } from './owner/accounts.ts';
import { agentRoutes } from './owner/agents.ts';
import { passkeyRoutes } from './owner/passkeys.ts';
import { jwksRoutes } from './site-api/jwks.ts';
import { tokenRoutes } from './agent-api/token.ts';
import { verifyRoutes } from './site-api/verify.ts';
import { stepupVerifyRoutes } from './site-api/stepup-verify.ts';
import { siteStepupRoutes } from './site-api/site-stepup.ts';
import { revocationRoutes } from './site-api/revocation.ts';
import { revocationEventRoutes } from './site-api/revocation-events.ts';
import { siteAgentStatusRoutes } from './site-api/agent-status.ts';
import { reputationRoutes } from './site-api/reputation.ts';
import { reportRoutes } from './site-api/reports.ts';
import { agentStatusRoutes } from './agent-api/agent-status.ts';
import { agentNotifyRoutes } from './agent-api/agent-notify.ts';
import { activityRoutes } from './owner/activity.ts';
import { agentStatusListRoutes } from './owner/agent-statuses.ts';
import { authzRequestRoutes } from './agent-api/authz-requests.ts';
import { stepupRequestRoutes } from './agent-api/stepup.ts';
import { agentPlanRoutes } from './agent-api/plans.ts';
import { ownerPlanRoutes } from './owner/plans.ts';
import { agentApprovalRoutes } from './agent-api/agent-approval.ts';
import { receiptRoutes } from './agent-api/receipts.ts';
import { approvalModeRoutes } from './owner/approval-modes.ts';
import { passwordManagerRoutes } from './owner/password-manager.ts';
import { approvalRoutes } from './owner/approvals.ts';
import { grantRoutes } from './owner/grants.ts';
import { userInfoRoutes } from './owner/user-info.ts';
import { adminKeyRoutes } from './admin/keys.ts';
import { pageRoutes } from './pages/index.ts';
import { deviceRoutes } from './owner/devices.ts';
import { pushRoutes } from './owner/push.ts';
import { notificationRoutes } from './owner/notifications.ts';
import { swReportRoutes } from './owner/sw-reports.ts';
import { oidcClientRoutes } from './oidc/clients.ts';
import { oidcProviderRoutes } from './oidc/provider.ts';
import { pairingCodeRoutes } from './owner/pairing.ts';
import { agentPairRoutes } from './agent-api/pairing.ts';
import { emailRoutes } from './owner/email.ts';
import { emailClaimRoutes } from './owner/email-claim.ts';
import { identityProviderRoutes } from './owner/identity-providers.ts';
import { phoneRoutes } from './owner/phone.ts';
import { recoveryRoutes } from './owner/recovery.ts';
import { accountDeleteRoutes } from './owner/account-delete.ts';
import { passwordRoutes } from './owner/password.ts';
import { exportRoutes } from './owner/export.ts';
import { agentTakeoverRoutes } from './agent-api/takeover.ts';
import { takeoverRoutes } from './owner/takeovers.ts';
import { takeoverSocketRoutes } from './owner/takeover-sockets.ts';
import { ownerOperatorRoutes } from './operators/owner-operators.ts';
import { adminOperatorRoutes } from './operators/admin-operators.ts';
import { connectRoutes } from './operators/connect.ts';
import { operatorTokenRoutes } from './operators/operator-token.ts';
import { ownerConnectionRoutes } from './operators/owner-connections.ts';
import { operatorAgentRoutes, operatorConnectionRoutes } from './operators/operator-agents.ts';
import { readinessRoutes } from './readiness.ts';
import { browserRoutes } from './browser.ts';
import { wbaRoutes } from './agent-api/wba.ts';
import { checkAgentRoutes } from './site-api/check-agent.ts';

/** Every route module, registered in one place. */
export async function registerRoutes(app: FastifyInstance, s: Services): Promise<void> {
  for (const routes of [metaRoutes, accountRoutes, agentRoutes, pairingCodeRoutes, agentPairRoutes, passkeyRoutes, jwksRoutes, tokenRoutes, verifyRoutes, stepupVerifyRoutes, siteStepupRoutes, revocationRoutes, revocationEventRoutes, siteAgentStatusRoutes, reputationRoutes, reportRoutes, agentStatusRoutes, agentNotifyRoutes, activityRoutes, agentStatusListRoutes, authzRequestRoutes, stepupRequestRoutes, agentPlanRoutes, ownerPlanRoutes, agentApprovalRoutes, receiptRoutes, approvalModeRoutes, passwordManagerRoutes, approvalRoutes, grantRoutes, userInfoRoutes, deviceRoutes, pushRoutes, notificationRoutes, swReportRoutes, oidcClientRoutes, oidcProviderRoutes, adminKeyRoutes, emailRoutes, emailClaimRoutes, passwordRoutes, exportRoutes, phoneRoutes, recoveryRoutes, accountDeleteRoutes, identityProviderRoutes, agentTakeoverRoutes, takeoverRoutes, takeoverSocketRoutes, ownerOperatorRoutes, adminOperatorRoutes, connectRoutes, operatorTokenRoutes, ownerConnectionRoutes, operatorAgentRoutes, operatorConnectionRoutes, readinessRoutes, browserRoutes, wbaRoutes, checkAgentRoutes, pageRoutes]) {
    await routes(app, s);
  }
}
