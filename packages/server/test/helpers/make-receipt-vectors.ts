/**
 * Writes packages/protocol/test/vectors/receipts.json: receipts made by Chromium's virtual
 * authenticator (chromium-receipt.ts), one per passkey algorithm, that the protocol's known-answer
 * tests check verifyReceipt against. Run: node --import tsx packages/server/test/helpers/make-receipt-vectors.ts
 */
import { writeFileSync } from 'node:fs';
import { detailsDigestOf } from '@mandate/protocol';
import { makeChromiumReceipt } from './chromium-receipt.ts';

const out = new URL('../../../protocol/test/vectors/receipts.json', import.meta.url);
const body = { product_id: 'sku-42', quantity: 1, price: { amount: 4900, currency: 'EUR' } };
const vectors = {
  ES256: await makeChromiumReceipt({ txn: 'txn_receipt_es256', aud: 'shop.example', action: 'checkout', details_digest: detailsDigestOf(body), user: 'usr_receipt_owner' }, 'ES256'),
  RS256: await makeChromiumReceipt({ txn: 'txn_receipt_rs256', aud: 'shop.example', action: 'refund', details_digest: null, user: 'usr_receipt_owner' }, 'RS256'),
  EdDSA: await makeChromiumReceipt({ txn: 'txn_receipt_eddsa', aud: 'mail.example', action: 'send_email', details_digest: detailsDigestOf({ to: 'a@example.com' }), user: 'usr_receipt_owner' }, 'EdDSA'),
};
writeFileSync(out, `${JSON.stringify({ details_body_es256: body, ...vectors }, null, 2)}\n`);
console.log(`wrote ${out.pathname}`);
