/**
 * Approval receipts (decisions §29): what proves, later and offline, that the owner's own passkey
 * approved exactly one step-up or agent approval. One receipt per approved request, written in the
 * same transaction as the approval, never for a denial and never for an approval without a passkey.
 *
 * The fields of a receipt:
 * - `txnId`: the request's id (`t_…`), the receipt's key; the challenge's `txn`.
 * - `userId`: the approving owner's id; the challenge's `user`.
 * - `agentId`: the agent that asked.
 * - `site`: the site the approval is for (the request's site); the challenge's `aud`.
 * - `action`: the action approved, as the agent wrote it; the challenge's `action`.
 * - `detailsDigest`: base64url SHA-256 of the JCS form of the details (43 characters), or null for
 *   a request without details; the challenge's `details_digest`.
 * - `nonce`: the 128 random bits (base64url, 22 characters) made with the challenge; its `nonce`.
 * - `approvedAt`: when the approval was stored, epoch milliseconds.
 * - `credentialId`: the passkey's credential id (base64url), the assertion's `id`.
 * - `authenticatorData`, `clientDataJson`, `signature`: the WebAuthn assertion's `response` fields,
 *   base64url exactly as received and verified (clientDataJson is the base64url of the JSON bytes).
 *
 * The challenge the passkey signed is `approvalChallenge({txn: txnId, aud: site, action,
 * detailsDigest, user: userId, nonce})` from `@mandate/protocol`; `client_data_json` carries it.
 */
export interface ReceiptRecord {
  txnId: string;
  userId: string;
  agentId: string;
  site: string;
  action: string;
  detailsDigest: string | null;
  nonce: string;
  approvedAt: number;
  credentialId: string;
  authenticatorData: string;
  clientDataJson: string;
  signature: string;
}

export interface ReceiptsRepo {
  /** Stores the receipt of an approval; false (nothing changed) when the request already has one. */
  record(receipt: ReceiptRecord): Promise<boolean>;
  /** The receipt of a request, or undefined. */
  get(txnId: string): Promise<ReceiptRecord | undefined>;
  /**
   * The owner's receipts in txn id order after `afterTxnId` ('' for the first page), at most `limit`
   * (all when absent): the data export reads them page by page.
   */
  listForUser(userId: string, afterTxnId?: string, limit?: number): Promise<ReceiptRecord[]>;
  /**
   * Anonymises every receipt of the owner (account deletion, with the activity: decisions §16, §29);
   * answers how many. As the anonymised activity keeps `seq`, type, time, agent and site, a row keeps
   * txn id, owner id, agent, site and approval time; what the passkey signed (nonce, credential id,
   * authenticator data, client data, signature), the free-text action and the details digest are
   * blanked ('' and null). Such a row proves nothing any more: a site that needs the proof keeps its
   * own copy of the receipt, which stays checkable with the JWKS.
   */
  anonymiseForUser(userId: string): Promise<number>;
}
