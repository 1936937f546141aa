import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ReceiptError, detailsDigestOf, verifyReceipt, type Receipt } from '@mandate/protocol';
import { makeChromiumReceipt } from './helpers/chromium-receipt.ts';

// A fresh receipt from Chromium's virtual authenticator each run (the committed vectors in
// packages/protocol/test/vectors/receipts.json could hide a change in what browsers produce):
// verifyReceipt accepts it and refuses it once its action or its user-verified flag is changed.

const refusedWith = (code: string) => (e: unknown) => e instanceof ReceiptError && e.code === code;

describe('receipts made afresh by Chromium (decisions §29)', () => {
  for (const alg of ['ES256', 'RS256', 'EdDSA'] as const) {
    it(`${alg}: accepted as made, refused when changed`, async () => {
      const digest = detailsDigestOf({ order: 42, total: '49.00 EUR' });
      const { receipt, jwks, origin } = await makeChromiumReceipt({ txn: 't_fresh', aud: 'shop.example', action: 'checkout', details_digest: digest, user: 'usr_fresh' }, alg);
      const verified = await verifyReceipt(receipt, { jwks, origin, expected: { txn: 't_fresh', details_digest: digest, user: 'usr_fresh' } });
      assert.equal(verified.receipt.credential_key.alg, alg);
      await assert.rejects(verifyReceipt({ ...receipt, action: 'refund' }, { jwks, origin }), refusedWith('challenge_mismatch'));
      const data = Buffer.from(receipt.webauthn.authenticator_data, 'base64url');
      data[32] = (data[32] ?? 0) & ~0x04;
      const unverified: Receipt = { ...receipt, webauthn: { ...receipt.webauthn, authenticator_data: data.toString('base64url') } };
      await assert.rejects(verifyReceipt(unverified, { jwks, origin }), refusedWith('user_not_verified'));
    });
  }
});
