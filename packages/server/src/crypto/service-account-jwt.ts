import { importPKCS8, SignJWT } from 'jose';

/**
 * A Google service account key file (the JSON the Cloud console downloads), reduced to what the
 * server uses. Parsed and checked by `parseServiceAccount` (delivery/fcm.ts).
 */
export interface ServiceAccount {
  type: 'service_account';
  client_email: string;
  /** PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`). */
  private_key: string;
  private_key_id: string;
  project_id?: string;
  token_uri?: string;
}

export interface AssertionOptions {
  /** The token endpoint the assertion is exchanged at. */
  aud: string;
  /** Space-separated OAuth scopes. */
  scope: string;
  /** Epoch milliseconds. */
  now: number;
}

/** Google accepts assertions valid for at most one hour. */
const LIFETIME_SEC = 3600;

// Importing a PEM parses ASN.1 every time; an account is one object for the life of the process.
const keys = new WeakMap<ServiceAccount, Promise<CryptoKey>>();

function privateKey(account: ServiceAccount): Promise<CryptoKey> {
  let key = keys.get(account);
  if (key === undefined) {
    key = importPKCS8(account.private_key, 'RS256');
    // A bad key must not stay cached as a rejected promise shared by every later call.
    key.catch(() => keys.delete(account));
    keys.set(account, key);
  }
  return key;
}

/**
 * The signed JWT of Google's service-account flow (RFC 7523 grant): RS256 with the account's key,
 * `kid` = private_key_id, iss = sub = client_email, exchanged at `aud` for an access token.
 */
export async function signServiceAccountAssertion(account: ServiceAccount, opts: AssertionOptions): Promise<string> {
  const iat = Math.floor(opts.now / 1000);
  return new SignJWT({ scope: opts.scope })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: account.private_key_id })
    .setIssuer(account.client_email)
    .setSubject(account.client_email)
    .setAudience(opts.aud)
    .setIssuedAt(iat)
    .setExpirationTime(iat + LIFETIME_SEC)
    .sign(await privateKey(account));
}

/** Fails early (at start) when the PEM is not an RSA PKCS#8 key jose can sign with. */
export async function checkServiceAccountKey(account: ServiceAccount): Promise<void> {
  await privateKey(account);
}
