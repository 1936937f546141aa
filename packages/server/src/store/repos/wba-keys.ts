import type { Selectable } from 'kysely';
import type { WbaKeyRecord, WbaKeysRepo } from '../ports/index.ts';
import type { WbaKeysTable } from '../schema.ts';
import { type Db, affected } from './db.ts';

const toRecord = (r: Selectable<WbaKeysTable>): WbaKeyRecord => ({
  agentId: r.agent_id,
  userId: r.user_id,
  label: r.label,
  kid: r.kid,
  x: r.x,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
  proof:
    r.proof_content_digest !== null && r.proof_signature_input !== null && r.proof_signature !== null && r.proof_expires_at !== null
      ? { contentDigest: r.proof_content_digest, signatureInput: r.proof_signature_input, signature: r.proof_signature, expiresAt: Number(r.proof_expires_at) }
      : null,
});

export function wbaKeysRepo(db: Db): WbaKeysRepo {
  const byKid = async (kid: string) => db.selectFrom('wba_keys').select('agent_id').where('kid', '=', kid).executeTakeFirst();
  return {
    async put(k, now) {
      const holder = await byKid(k.kid);
      if (holder !== undefined && holder.agent_id !== k.agentId) return 'taken';
      if (holder !== undefined) return 'stored';
      try {
        await db
          .insertInto('wba_keys')
          .values({ agent_id: k.agentId, user_id: k.userId, label: k.label, kid: k.kid, x: k.x, created_at: now, updated_at: now, proof_content_digest: null, proof_signature_input: null, proof_signature: null, proof_expires_at: null })
          .onConflict((oc) => oc.column('agent_id').doUpdateSet({ kid: k.kid, x: k.x, updated_at: now, proof_content_digest: null, proof_signature_input: null, proof_signature: null, proof_expires_at: null }))
          .execute();
      } catch (e) {
        // Another agent stored the same key between the read and the write: the unique kid refused it.
        const now = await byKid(k.kid);
        if (now !== undefined && now.agent_id !== k.agentId) return 'taken';
        throw e;
      }
      return 'stored';
    },
    async byAgent(agentId) {
      const r = await db.selectFrom('wba_keys').selectAll().where('agent_id', '=', agentId).executeTakeFirst();
      return r && toRecord(r);
    },
    async byLabel(label) {
      const r = await db.selectFrom('wba_keys').selectAll().where('label', '=', label).executeTakeFirst();
      return r && toRecord(r);
    },
    async setProof(agentId, kid, p) {
      const r = await db
        .updateTable('wba_keys')
        .set({ proof_content_digest: p.contentDigest, proof_signature_input: p.signatureInput, proof_signature: p.signature, proof_expires_at: p.expiresAt })
        .where('agent_id', '=', agentId)
        .where('kid', '=', kid)
        .executeTakeFirst();
      return affected(r) === 1;
    },
    async listForUser(userId) {
      const rows = await db.selectFrom('wba_keys').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('agent_id').execute();
      return rows.map(toRecord);
    },
    async deleteForUser(userId) {
      return affected(await db.deleteFrom('wba_keys').where('user_id', '=', userId).executeTakeFirst());
    },
  };
}
