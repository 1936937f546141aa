import { approvalChallenge } from '@mandate/protocol';
import { randomToken } from '../../crypto/random.ts';
import type { AuthzRequestRecord, ReceiptRecord } from '../../store/ports/index.ts';

/**
 * Approvals that can be proved (decisions §29): the passkey challenge of a step-up or an agent
 * approval commits to the request (txn, site, action, details digest, owner) and a fresh nonce, and
 * the approval's assertion is kept as its receipt. Access requests and plans keep random challenges
 * and leave no receipt.
 */

/** The request kinds whose approval is bound to what it approves and leaves a receipt. */
export function approvalIsProvable(request: Pick<AuthzRequestRecord, 'kind' | 'action'>): request is Pick<AuthzRequestRecord, 'kind'> & { action: string } {
  return (request.kind === 'stepup' || request.kind === 'agent_approval') && request.action !== null;
}

/** 128 random bits, base64url (22 characters). */
export const newApprovalNonce = (): string => randomToken(16);

/** The challenge the owner's passkey signs to approve `request` (a step-up or agent approval). */
export function challengeOf(request: AuthzRequestRecord & { action: string }, nonce: string): string {
  return approvalChallenge({
    txn: request.id,
    aud: request.site,
    action: request.action,
    detailsDigest: request.boundDetails?.digest ?? null,
    user: request.userId,
    nonce,
  });
}

/** The WebAuthn fields a receipt keeps, base64url as the owner's browser sent them. */
export interface AssertionFields {
  id: string;
  response: { authenticatorData: string; clientDataJSON: string; signature: string };
}

/** The receipt of an approval just verified: the request's committed fields, the nonce and the assertion. */
export function receiptOf(request: AuthzRequestRecord & { action: string }, nonce: string, assertion: AssertionFields, approvedAt: number): ReceiptRecord {
  return {
    txnId: request.id,
    userId: request.userId,
    agentId: request.agentId,
    site: request.site,
    action: request.action,
    detailsDigest: request.boundDetails?.digest ?? null,
    nonce,
    approvedAt,
    credentialId: assertion.id,
    authenticatorData: assertion.response.authenticatorData,
    clientDataJson: assertion.response.clientDataJSON,
    signature: assertion.response.signature,
  };
}
