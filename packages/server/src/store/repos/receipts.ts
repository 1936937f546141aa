import type { Selectable } from 'kysely';
import type { ReceiptRecord, ReceiptsRepo } from '../ports/index.ts';
import type { ApprovalReceiptsTable } from '../schema.ts';
import { type Db, affected } from './db.ts';

const toRecord = (r: Selectable<ApprovalReceiptsTable>): ReceiptRecord => ({
  txnId: r.txn_id,
  userId: r.user_id,
  agentId: r.agent_id,
  site: r.site,
  action: r.action,
  detailsDigest: r.details_digest,
  nonce: r.nonce,
  approvedAt: Number(r.approved_at),
  credentialId: r.credential_id,
  authenticatorData: r.authenticator_data,
  clientDataJson: r.client_data_json,
  signature: r.signature,
});

/** Approval receipts (ports/receipts.ts): one row per approved request, keyed by its txn id. */
export function receiptsRepo(db: Db): ReceiptsRepo {
  return {
    async record(r) {
      const inserted = await db
        .insertInto('approval_receipts')
        .values({
          txn_id: r.txnId,
          user_id: r.userId,
          agent_id: r.agentId,
          site: r.site,
          action: r.action,
          details_digest: r.detailsDigest,
          nonce: r.nonce,
          approved_at: r.approvedAt,
          credential_id: r.credentialId,
          authenticator_data: r.authenticatorData,
          client_data_json: r.clientDataJson,
          signature: r.signature,
        })
        .onConflict((oc) => oc.column('txn_id').doNothing())
        .executeTakeFirst();
      return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
    },
    async get(txnId) {
      const r = await db.selectFrom('approval_receipts').selectAll().where('txn_id', '=', txnId).executeTakeFirst();
      return r && toRecord(r);
    },
    async listForUser(userId, afterTxnId = '', limit) {
      let q = db.selectFrom('approval_receipts').selectAll().where('user_id', '=', userId).where('txn_id', '>', afterTxnId).orderBy('txn_id');
      if (limit !== undefined) q = q.limit(limit);
      return (await q.execute()).map(toRecord);
    },
    async anonymiseForUser(userId) {
      const blank = { action: '', details_digest: null, nonce: '', credential_id: '', authenticator_data: '', client_data_json: '', signature: '' };
      return affected(await db.updateTable('approval_receipts').set(blank).where('user_id', '=', userId).where('nonce', '!=', '').executeTakeFirst());
    },
  };
}
