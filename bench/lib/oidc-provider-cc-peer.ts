/**
 * The peer row of the pass issuance benchmark: oidc-provider 8's token endpoint with the
 * `client_credentials` grant and DPoP (`lib/oidc-provider-cc-server.ts`, a process of its own), and
 * the requests it is sent: client_secret_basic, and a fresh DPoP proof per call (unique jti, iat
 * now, htu the token endpoint), made before the round's clock starts.
 */
import { randomBytes } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { LoadRequest } from './load.ts';
import { type Proc, startProcess } from './processes.ts';

export interface ClientCredentialsPeer {
  proc: Proc;
  /** `n` token requests, each with a fresh proof (signed now: proofs are good for 300 s there). */
  requests(n: number): Promise<LoadRequest[]>;
  /** A 200 with a DPoP-bound access token. */
  ok(status: number, body: string): boolean;
}

export async function startClientCredentialsPeer(o: { port: number }): Promise<ClientCredentialsPeer> {
  const clientId = 'bench_client';
  const clientSecret = randomBytes(32).toString('base64url');
  const proc = await startProcess({
    name: 'oidc-provider (client_credentials, DPoP)',
    script: 'bench/lib/oidc-provider-cc-server.ts',
    port: o.port,
    healthPath: '/.well-known/openid-configuration',
    env: { PORT: String(o.port), PEER_CLIENT_ID: clientId, PEER_CLIENT_SECRET: clientSecret },
  });
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk: JWK = await exportJWK(publicKey);
  const htu = `${proc.origin}/token`;
  const authorization = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
  const body = 'grant_type=client_credentials';
  const proof = () =>
    new SignJWT({ jti: randomBytes(16).toString('base64url'), htm: 'POST', htu, iat: Math.floor(Date.now() / 1000) })
      .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk })
      .sign(privateKey);
  return {
    proc,
    async requests(n) {
      const out: LoadRequest[] = [];
      for (let i = 0; i < n; i += 1000) {
        const proofs = await Promise.all(Array.from({ length: Math.min(1000, n - i) }, proof));
        out.push(...proofs.map((dpop): LoadRequest => ({ method: 'POST', path: '/token', body, headers: { 'content-type': 'application/x-www-form-urlencoded', authorization, dpop } })));
      }
      return out;
    },
    ok(status, text) {
      if (status !== 200) return false;
      try {
        const t = JSON.parse(text) as { access_token?: unknown; token_type?: unknown };
        return typeof t.access_token === 'string' && t.token_type === 'DPoP';
      } catch {
        return false;
      }
    },
  };
}
