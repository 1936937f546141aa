import type { Selectable } from 'kysely';
import type { OAuthFlowPurpose, OAuthStateRecord, OAuthStatesRepo } from '../ports/index.ts';
import type { OAuthStatesTable } from '../schema.ts';
import { type Db, affected } from './db.ts';

const toRecord = (r: Selectable<OAuthStatesTable>): OAuthStateRecord => ({
  stateHash: r.state_hash,
  purpose: r.purpose as OAuthFlowPurpose,
  provider: r.provider,
  userId: r.user_id,
  txnId: r.txn_id,
  limits: r.limits === null ? null : (JSON.parse(r.limits) as OAuthStateRecord['limits']),
  browserHash: r.browser_hash,
  nonce: r.nonce,
  codeVerifier: r.code_verifier,
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
});

export function oauthStatesRepo(db: Db): OAuthStatesRepo {
  return {
    async create(s) {
      await db
        .insertInto('oauth_states')
        .values({
          state_hash: s.stateHash, purpose: s.purpose, provider: s.provider, user_id: s.userId, txn_id: s.txnId,
          limits: s.limits === null ? null : JSON.stringify(s.limits), browser_hash: s.browserHash, nonce: s.nonce,
          code_verifier: s.codeVerifier, created_at: s.createdAt, expires_at: s.expiresAt, used_at: null,
        })
        .execute();
    },
    async consume(stateHash, now) {
      // One UPDATE ... WHERE used_at IS NULL RETURNING: the row lock (PostgreSQL) or the single
      // writer (SQLite) lets exactly one caller see the row come back.
      const r = await db
        .updateTable('oauth_states')
        .set({ used_at: now })
        .where('state_hash', '=', stateHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst();
      return r && toRecord(r);
    },
    async purgeExpired(before) {
      return affected(await db.deleteFrom('oauth_states').where('expires_at', '<', before).executeTakeFirst());
    },
    async deleteForUser(userId) {
      return affected(await db.deleteFrom('oauth_states').where('user_id', '=', userId).executeTakeFirst());
    },
  };
}
