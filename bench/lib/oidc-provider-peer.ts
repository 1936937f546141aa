/**
 * The peer row of the OIDC token benchmark: oidc-provider 8 in a process of its own
 * (`lib/oidc-provider-server.ts`), its token endpoint at `POST /token`, and sign-ins minted there
 * without interactions (a grant and a refresh token each, through the library's own models).
 */
import { randomBytes } from 'node:crypto';
import { type Proc, startProcess } from './processes.ts';

export interface OidcProviderPeer {
  proc: Proc;
  clientId: string;
  clientSecret: string;
  /** `n` new sign-ins: their first refresh tokens. */
  mint(n: number): Promise<string[]>;
}

export async function startOidcProviderPeer(o: { port: number; redirectUri: string }): Promise<OidcProviderPeer> {
  const clientId = 'bench_client';
  const clientSecret = randomBytes(32).toString('base64url');
  const proc = await startProcess({
    name: 'oidc-provider',
    script: 'bench/lib/oidc-provider-server.ts',
    port: o.port,
    healthPath: '/.well-known/openid-configuration',
    env: { PORT: String(o.port), PEER_CLIENT_ID: clientId, PEER_CLIENT_SECRET: clientSecret, PEER_REDIRECT_URI: o.redirectUri },
  });
  return {
    proc,
    clientId,
    clientSecret,
    async mint(n) {
      const res = await fetch(`${proc.origin}/bench/mint?n=${n}`, { method: 'POST' });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`oidc-provider peer: minting sign-ins answered ${res.status}: ${text}\n${proc.logs()}`);
      return (JSON.parse(text) as { refresh_tokens: string[] }).refresh_tokens;
    },
  };
}
