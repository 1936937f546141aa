import { createPublicKey, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { approvalChallenge, signReceiptKeyAttestation, type CredentialKey, type Receipt, type ReceiptWebauthn } from '@mandate/protocol';
import { exportJWK, generateKeyPair } from 'jose';
import type { JSONWebKeySet } from 'jose';
import { addAuthenticator, launchChromium } from './browser.ts';

/**
 * Makes a receipt (decisions §29) with a real authenticator: Chromium's virtual WebAuthn
 * authenticator (CDP) registers a passkey on a local page and signs, with navigator.credentials.get,
 * the challenge approvalChallenge gives for the receipt's values. The attestation is signed by a
 * fresh test key whose JWKS comes back with the receipt. Nothing here is the service: the fixture it
 * makes tests the verifier against what a browser really produces.
 */
export interface ChromiumReceipt {
  receipt: Receipt;
  jwks: JSONWebKeySet;
  origin: string;
}

export interface ReceiptValues {
  txn: string;
  aud: string;
  action: string;
  details_digest: string | null;
  user: string;
}

interface Registered {
  id: string;
  /** SubjectPublicKeyInfo, DER, base64url. */
  spki: string;
  alg: number;
}

/** What the page's script offers. */
interface Ceremonies {
  register(alg: number): Promise<Registered>;
  assert(arg: { challenge: string; id: string }): Promise<Omit<ReceiptWebauthn, 'credential_id'>>;
}

/*
 * The page's own script does the ceremonies; the test calls them through anonymous arrows (a named
 * function handed to page.evaluate would carry the transpiler's `__name` helper, which the page lacks).
 */
const PAGE = `<!doctype html><title>receipt</title><script>
const b64u = (b) => btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
const bytes = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
window.register = async (alg) => {
  const cred = await navigator.credentials.create({ publicKey: {
    rp: { name: 'receipt test', id: location.hostname },
    user: { id: crypto.getRandomValues(new Uint8Array(16)), name: 'owner', displayName: 'Owner' },
    challenge: crypto.getRandomValues(new Uint8Array(32)),
    pubKeyCredParams: [{ type: 'public-key', alg }],
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  } });
  return { id: b64u(cred.rawId), spki: b64u(cred.response.getPublicKey()), alg: cred.response.getPublicKeyAlgorithm() };
};
window.assert = async ({ challenge, id }) => {
  const cred = await navigator.credentials.get({ publicKey: {
    challenge: bytes(challenge), allowCredentials: [{ type: 'public-key', id: bytes(id) }], userVerification: 'required',
  } });
  const r = cred.response;
  return { authenticator_data: b64u(r.authenticatorData), client_data_json: b64u(r.clientDataJSON), signature: b64u(r.signature) };
};
</script>`;

/** COSE algorithm ids the page may ask the authenticator for. */
const COSE_ALG: Record<CredentialKey['alg'], number> = { ES256: -7, RS256: -257, EdDSA: -8 };

export async function makeChromiumReceipt(values: ReceiptValues, alg: CredentialKey['alg'] = 'ES256'): Promise<ChromiumReceipt> {
  const page = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  const browser = await launchChromium('receipt');
  try {
    // localhost is a secure context, so WebAuthn runs over plain http; the RP id is "localhost".
    const origin = `http://localhost:${(page.address() as AddressInfo).port}`;
    const tab = await browser.newPage();
    await addAuthenticator(await tab.context().newCDPSession(tab));
    await tab.goto(`${origin}/`);
    const registeredAt = new Date().toISOString();
    const registered = await tab.evaluate((coseAlg) => (window as unknown as Ceremonies).register(coseAlg), COSE_ALG[alg]);
    if (registered.alg !== COSE_ALG[alg]) throw new Error(`the authenticator made a key of COSE alg ${registered.alg}, not ${alg}`);
    const jwk = createPublicKey({ key: Buffer.from(registered.spki, 'base64url'), format: 'der', type: 'spki' }).export({ format: 'jwk' });
    const credentialKey = { ...jwk, alg } as CredentialKey;

    const nonce = randomBytes(16).toString('base64url');
    const challenge = approvalChallenge({ txn: values.txn, aud: values.aud, action: values.action, detailsDigest: values.details_digest, user: values.user, nonce });
    const assertion = await tab.evaluate((arg) => (window as unknown as Ceremonies).assert(arg), { challenge, id: registered.id });

    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const kid = 'receipt-test-key';
    const attestation = await signReceiptKeyAttestation(privateKey, kid, {
      iss: origin,
      type: 'receipt-key',
      iat: Math.floor(Date.now() / 1000),
      user: values.user,
      credential_id: registered.id,
      credential_key: credentialKey,
      registered_at: registeredAt,
    });
    const receipt: Receipt = {
      v: 1,
      ...values,
      nonce,
      approved_at: new Date().toISOString(),
      webauthn: { credential_id: registered.id, ...assertion },
      credential_key: credentialKey,
      attestation,
    };
    return { receipt, jwks: { keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] }, origin };
  } finally {
    await browser.close();
    await new Promise<void>((resolve) => page.close(() => resolve()));
  }
}
