import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { JSONWebKeySet, JWTPayload } from 'jose';
import type { CredentialKey, Receipt, ReceiptErrorCode, ReceiptKeyClaims, VerifyReceiptOptions } from '../src/index.ts';
import { RECEIPT_KEY_TYP, ReceiptError, detailsDigestOf, signReceiptKeyAttestation, verifyReceipt } from '../src/index.ts';

/** Receipts made by Chromium's virtual authenticator (server/test/helpers/make-receipt-vectors.ts). */
type Vector = { receipt: Receipt; jwks: JSONWebKeySet; origin: string };
const file = JSON.parse(readFileSync(new URL('./vectors/receipts.json', import.meta.url), 'utf8')) as Record<'ES256' | 'RS256' | 'EdDSA', Vector> & { details_body_es256: unknown };
const ALGS = ['ES256', 'RS256', 'EdDSA'] as const;

const clone = <T>(v: T): T => structuredClone(v);

/** A service key of this test's own, so the attestation can be re-signed with chosen claims. */
const service = await generateKeyPair('ES256', { extractable: true });
const KID = 'test-service-key';
const serviceJwks: JSONWebKeySet = { keys: [{ ...(await exportJWK(service.publicKey)), kid: KID, alg: 'ES256' }] };

function claimsOf(v: Vector, over: Partial<ReceiptKeyClaims> = {}): ReceiptKeyClaims {
  const { receipt: r } = v;
  return { iss: v.origin, type: 'receipt-key', iat: 1_700_000_000, user: r.user, credential_id: r.webauthn.credential_id, credential_key: r.credential_key, registered_at: '2020-01-01T00:00:00.000Z', ...over };
}

/** The vector's receipt with an attestation by this test's key over `claims`. */
async function resigned(v: Vector, claims: ReceiptKeyClaims, receipt: Receipt = clone(v.receipt)): Promise<Receipt> {
  return { ...receipt, attestation: await signReceiptKeyAttestation(service.privateKey, KID, claims) };
}

const optionsOf = (v: Vector, over: Partial<VerifyReceiptOptions> = {}): VerifyReceiptOptions => ({ jwks: v.jwks, origin: v.origin, ...over });

async function refused(receipt: unknown, o: VerifyReceiptOptions, code: ReceiptErrorCode): Promise<void> {
  await assert.rejects(verifyReceipt(receipt, o), (e: unknown) => {
    assert.ok(e instanceof ReceiptError, `expected a ReceiptError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    return true;
  });
}

/** Rewrites authenticator data byte `index` with `f`. */
function withAuthByte(r: Receipt, index: number, f: (b: number) => number): Receipt {
  const bytes = Buffer.from(r.webauthn.authenticator_data, 'base64url');
  bytes[index] = f(bytes[index] ?? 0);
  return { ...r, webauthn: { ...r.webauthn, authenticator_data: bytes.toString('base64url') } };
}

function withClientData(r: Receipt, f: (data: Record<string, unknown>) => Record<string, unknown>): Receipt {
  const data = JSON.parse(Buffer.from(r.webauthn.client_data_json, 'base64url').toString('utf8')) as Record<string, unknown>;
  return { ...r, webauthn: { ...r.webauthn, client_data_json: Buffer.from(JSON.stringify(f(data))).toString('base64url') } };
}

const es = file.ES256;

describe('verifyReceipt: receipts made by a real authenticator (decisions §29)', () => {
  for (const alg of ALGS) {
    it(`accepts the ${alg} receipt with the JWKS and origin it was made with`, async () => {
      const v = file[alg];
      const verified = await verifyReceipt(v.receipt, optionsOf(v));
      assert.deepEqual(verified.receipt, v.receipt);
      assert.ok(verified.sign_count >= 0);
      assert.ok(Date.parse(verified.registered_at) <= Date.parse(v.receipt.approved_at));
      // The same receipt with an attestation by another service key, through that key's JWKS.
      await verifyReceipt(await resigned(v, claimsOf(v)), optionsOf(v, { jwks: serviceJwks }));
    });
  }

  it('the ES256 receipt commits to the details digest of the request body', async () => {
    assert.equal(es.receipt.details_digest, detailsDigestOf(file.details_body_es256));
    const pins = { txn: es.receipt.txn, aud: es.receipt.aud, action: es.receipt.action, details_digest: detailsDigestOf(file.details_body_es256), user: es.receipt.user };
    await verifyReceipt(es.receipt, optionsOf(es, { expected: pins }));
  });

  it('pinned values must match', async () => {
    for (const [k, value] of [['txn', 'txn_other'], ['aud', 'other.example'], ['action', 'refund'], ['details_digest', detailsDigestOf({ quantity: 2 })], ['details_digest', null], ['user', 'usr_other']] as const) {
      await refused(es.receipt, optionsOf(es, { expected: { [k]: value } }), 'receipt_unexpected');
    }
  });

  it('any change to what the challenge commits to is refused (digest, action, txn, site, nonce, user)', async () => {
    for (const v of ALGS.map((a) => file[a])) {
      for (const change of [
        { details_digest: detailsDigestOf({ product_id: 'sku-42', quantity: 100 }) },
        { details_digest: v.receipt.details_digest === null ? detailsDigestOf({}) : null },
        { action: 'delete_account' },
        { txn: 'txn_other' },
        { aud: 'evil.example' },
        { nonce: randomBytes(16).toString('base64url') },
      ]) {
        await refused({ ...clone(v.receipt), ...change }, optionsOf(v), 'challenge_mismatch');
      }
      // Another person: the attestation no longer binds; with one that does, the challenge differs.
      await refused({ ...clone(v.receipt), user: 'usr_other' }, optionsOf(v), 'attestation_mismatch');
      const other = { ...clone(v.receipt), user: 'usr_other' };
      await refused(await resigned(v, claimsOf(v, { user: 'usr_other' }), other), optionsOf(v, { jwks: serviceJwks }), 'challenge_mismatch');
    }
  });

  it('the assertion signature is checked (a changed byte, another signature, the flags it covers)', async () => {
    for (const v of ALGS.map((a) => file[a])) {
      const sig = Buffer.from(v.receipt.webauthn.signature, 'base64url');
      sig[sig.length - 5] = (sig[sig.length - 5] ?? 0) ^ 0x01;
      await refused({ ...clone(v.receipt), webauthn: { ...v.receipt.webauthn, signature: sig.toString('base64url') } }, optionsOf(v), 'signature_invalid');
      // The sign counter is covered by the signature too.
      await refused(withAuthByte(clone(v.receipt), 36, (b) => b ^ 0x01), optionsOf(v), 'signature_invalid');
      // Backup-eligible flag set afterwards: UP and UV still hold, the signature does not.
      await refused(withAuthByte(clone(v.receipt), 32, (b) => b | 0x08), optionsOf(v), 'signature_invalid');
    }
  });

  it('user present and user verified are required; the RP id hash must be the origin host', async () => {
    await refused(withAuthByte(clone(es.receipt), 32, (b) => b & ~0x04), optionsOf(es), 'user_not_verified');
    await refused(withAuthByte(clone(es.receipt), 32, (b) => b & ~0x01), optionsOf(es), 'user_not_present');
    await refused(withAuthByte(clone(es.receipt), 0, (b) => b ^ 0xff), optionsOf(es), 'rp_id_mismatch');
    const short = { ...clone(es.receipt), webauthn: { ...es.receipt.webauthn, authenticator_data: Buffer.alloc(36).toString('base64url') } };
    await refused(short, optionsOf(es), 'receipt_malformed');
  });

  it('the client data: type webauthn.get, the origin, not cross-origin, JSON', async () => {
    await refused(withClientData(clone(es.receipt), (d) => ({ ...d, type: 'webauthn.create' })), optionsOf(es), 'client_data_type');
    await refused(withClientData(clone(es.receipt), (d) => ({ ...d, origin: 'https://evil.example' })), optionsOf(es), 'origin_mismatch');
    await refused(withClientData(clone(es.receipt), (d) => ({ ...d, crossOrigin: true })), optionsOf(es), 'origin_mismatch');
    // Re-serialised but unchanged: only the signature can tell.
    await refused(withClientData(clone(es.receipt), (d) => ({ ...d, extra: 1 })), optionsOf(es), 'signature_invalid');
    const notJson = { ...clone(es.receipt), webauthn: { ...es.receipt.webauthn, client_data_json: Buffer.from('{"type":').toString('base64url') } };
    await refused(notJson, optionsOf(es), 'client_data_invalid');
  });

  it('a receipt is checked for one service origin: another origin, port or scheme is refused', async () => {
    const port = Number(new URL(es.origin).port);
    for (const origin of ['https://evil.example', `http://localhost:${port + 1}`, `https://localhost:${port}`]) {
      await refused(await resigned(es, claimsOf(es, { iss: origin })), optionsOf(es, { jwks: serviceJwks, origin }), 'origin_mismatch');
    }
    // The attestation's issuer is the origin unless told otherwise.
    await refused(es.receipt, optionsOf(es, { issuer: `${es.origin}/mandate` }), 'attestation_invalid');
    for (const origin of ['', 'localhost', `${es.origin}/path`, 'ftp://localhost', 42]) {
      await assert.rejects(verifyReceipt(es.receipt, optionsOf(es, { origin: origin as string })), TypeError);
    }
  });

  it('the credential key must be the attested one and a valid key', async () => {
    const otherEc = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    const otherKey = { ...otherEc, alg: 'ES256' } as CredentialKey;
    // Swapped in the receipt only: the attestation is for another key.
    await refused({ ...clone(es.receipt), credential_key: otherKey }, optionsOf(es), 'attestation_mismatch');
    // Swapped in both (the service attested the other key): the passkey's signature does not verify with it.
    const both = { ...clone(es.receipt), credential_key: otherKey };
    await refused(await resigned(es, claimsOf(es, { credential_key: otherKey }), both), optionsOf(es, { jwks: serviceJwks }), 'signature_invalid');
    // Not a point on P-256.
    const offCurve = { kty: 'EC', crv: 'P-256', x: Buffer.alloc(32, 1).toString('base64url'), y: Buffer.alloc(32, 2).toString('base64url'), alg: 'ES256' } as CredentialKey;
    const bad = { ...clone(es.receipt), credential_key: offCurve };
    await refused(await resigned(es, claimsOf(es, { credential_key: offCurve }), bad), optionsOf(es, { jwks: serviceJwks }), 'credential_key_invalid');
    // An algorithm other than the key's, or a private key: not a credential key at all.
    await refused({ ...clone(es.receipt), credential_key: { ...es.receipt.credential_key, alg: 'RS256' } }, optionsOf(es), 'receipt_malformed');
    await refused({ ...clone(es.receipt), credential_key: { ...es.receipt.credential_key, d: 'AAAA' } }, optionsOf(es), 'receipt_malformed');
  });

  it('the attestation: signature, typ, type, issuer, claims, key, binding and time', async () => {
    const att = es.receipt.attestation;
    const flipped = `${att.slice(0, -3)}${att.at(-3) === 'A' ? 'B' : 'A'}${att.slice(-2)}`;
    await refused({ ...clone(es.receipt), attestation: flipped }, optionsOf(es), 'attestation_invalid');
    await refused({ ...clone(es.receipt), attestation: 'not.a.jwt' }, optionsOf(es), 'attestation_invalid');
    // Signed by a key the JWKS does not hold, under the same kid.
    const stranger = await generateKeyPair('ES256');
    const kid = (es.jwks.keys[0] as { kid: string }).kid;
    const byStranger = await signReceiptKeyAttestation(stranger.privateKey, kid, claimsOf(es));
    await refused({ ...clone(es.receipt), attestation: byStranger }, optionsOf(es), 'attestation_invalid');
    // Another typ, or another type claim: a service token of another kind is not an attestation.
    const sign = (claims: JWTPayload, typ: string) => new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: KID, typ }).sign(service.privateKey);
    for (const [claims, typ] of [
      [{ ...claimsOf(es) }, 'stepup+jwt'],
      [{ ...claimsOf(es), type: 'stepup' }, RECEIPT_KEY_TYP],
      [{ ...claimsOf(es), iss: 'https://other.example' }, RECEIPT_KEY_TYP],
      [{ ...claimsOf(es), registered_at: 'yesterday' }, RECEIPT_KEY_TYP],
      [{ ...claimsOf(es), credential_key: undefined }, RECEIPT_KEY_TYP],
      [{ ...claimsOf(es), user: undefined }, RECEIPT_KEY_TYP],
    ] as const) {
      await refused({ ...clone(es.receipt), attestation: await sign(claims, typ) }, optionsOf(es, { jwks: serviceJwks }), 'attestation_invalid');
    }
    await refused(await resigned(es, claimsOf(es, { credential_id: randomBytes(32).toString('base64url') })), optionsOf(es, { jwks: serviceJwks }), 'attestation_mismatch');
    const later = new Date(Date.parse(es.receipt.approved_at) + 1000).toISOString();
    await refused(await resigned(es, claimsOf(es, { registered_at: later })), optionsOf(es, { jwks: serviceJwks }), 'approved_before_registration');
  });

  it('malformed receipts are refused with receipt_malformed, never another error', async () => {
    const r = es.receipt;
    for (const bad of [null, [], 'receipt', 42, {}, { ...r, v: 2 }, { ...r, extra: 1 }, { ...r, txn: '' }, { ...r, txn: 'x'.repeat(257) }, { ...r, nonce: 'a+b' },
      { ...r, approved_at: 'today' }, { ...r, details_digest: 'short' }, { ...r, webauthn: null }, { ...r, webauthn: { ...r.webauthn, signature: '' } },
      { ...r, webauthn: { ...r.webauthn, signature: 'A'.repeat(20_000) } }, { ...r, credential_key: null }, { ...r, attestation: 7 }]) {
      await refused(bad, optionsOf(es), 'receipt_malformed');
    }
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.constantFrom(...Object.keys(r)), async (value, key) => {
        const e = await verifyReceipt({ ...r, [key]: value }, optionsOf(es)).then(() => null, (err: unknown) => err);
        // Only a value equal to the original verifies; everything else is a ReceiptError.
        assert.ok(e === null || e instanceof ReceiptError, String(e));
      }),
      { numRuns: 300 },
    );
  });
});
