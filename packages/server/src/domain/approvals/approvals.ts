import type { RequestStatus } from '../../store/ports/index.ts';
import { type AccessRequestInput, type CreatedRequest, requestAccess } from './access-requests.ts';
import type { ApprovalDeps } from './deps.ts';
import { type IdentityProviderProof, type TxAck, approvalOptions, approveByIdentityProvider, checkIdentityProviderApproval, decide } from './owner-decisions.ts';
import { type PendingItem, pendingForOwner } from './pending.ts';
import { type PollView, pollRequest } from './polling.ts';
import { type AgentApprovalInput, type CreatedAgentApproval, requestAgentApproval } from './agent-approvals.ts';
import { type StepupRequestInput, requestStepup } from './stepup-requests.ts';
import { type SitePollInput, type SiteStepupInput, pollSiteStepup, requestSiteStepup } from './site-stepups.ts';

/**
 * Access and step-up requests and the owner's answers: one entry point (`s.approvals`) over the
 * concept files of this folder, each of which holds the rules of one step.
 */
export class Approvals {
  constructor(private readonly d: ApprovalDeps) {}

  /** POST /api/v1/authz-requests. */
  requestAccess(input: AccessRequestInput): Promise<CreatedRequest> {
    return requestAccess(this.d, input);
  }

  /** POST /api/v1/stepup. */
  requestStepup(input: StepupRequestInput): Promise<CreatedRequest> {
    return requestStepup(this.d, input);
  }

  /** POST /api/v1/stepup/site: the site asks, authenticated by the agent's pass. */
  requestSiteStepup(input: SiteStepupInput): Promise<CreatedRequest> {
    return requestSiteStepup(this.d, input);
  }

  /** GET /api/v1/stepup/site/{txn_id}: the site's long poll. */
  pollSiteStepup(input: SitePollInput): Promise<PollView> {
    return pollSiteStepup(this.d, input);
  }

  /** POST /api/v1/agent-approval. */
  requestAgentApproval(input: AgentApprovalInput): Promise<CreatedAgentApproval> {
    return requestAgentApproval(this.d, input);
  }

  /** GET /api/v1/authz-requests/{txn_id}; `agentJwt` is the X-Agent-JWT header, if sent. */
  poll(txnId: string, agentJwt: string | undefined, ip?: string | null): Promise<PollView> {
    return pollRequest(this.d, txnId, agentJwt, ip ?? null);
  }

  /** GET /api/txn/{txn_id}/assertion-options. */
  assertionOptions(userId: string, txnId: string): Promise<unknown> {
    return approvalOptions(this.d, userId, txnId);
  }

  /** POST /api/txn/{txn_id}/response. */
  decide(userId: string, txnId: string, ack: TxAck, ip?: string | null): Promise<{ status: RequestStatus }> {
    return decide(this.d, userId, txnId, ack, ip ?? null);
  }

  /** POST /api/txn/{txn_id}/oauth/{provider}: may this request be approved by an identity provider? */
  checkIdentityProviderApproval(userId: string, txnId: string, limits: TxAck['limits']): Promise<void> {
    return checkIdentityProviderApproval(this.d, userId, txnId, limits);
  }

  /** The callback of that flow, once the identity and its freshness are checked. */
  approveByIdentityProvider(userId: string, txnId: string, proof: IdentityProviderProof, ip?: string | null): Promise<{ status: RequestStatus }> {
    return approveByIdentityProvider(this.d, userId, txnId, proof, ip ?? null);
  }

  /** The `pending` list of GET /api/me. */
  pending(userId: string): Promise<PendingItem[]> {
    return pendingForOwner(this.d, userId);
  }
}
