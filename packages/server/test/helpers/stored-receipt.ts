import { join } from 'node:path';
import Database from 'better-sqlite3';

/** An approval receipt as the service stored it (migration 030, `approval_receipts`). */
export interface StoredReceipt {
  txn_id: string;
  user_id: string;
  site: string;
  action: string;
  details_digest: string | null;
  nonce: string;
  credential_id: string;
  client_data_json: string;
}

/**
 * The receipt a running server process on SQLite stored for `txnId` (undefined when none), read
 * straight from its database file in `dataDir`, read-only: for end-to-end tests that check what the
 * service recorded without going through the service.
 */
export function storedReceipt(dataDir: string, txnId: string): StoredReceipt | undefined {
  const db = new Database(join(dataDir, 'mandate.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT txn_id, user_id, site, action, details_digest, nonce, credential_id, client_data_json FROM approval_receipts WHERE txn_id = ?').get(txnId) as StoredReceipt | undefined;
  } finally {
    db.close();
  }
}
