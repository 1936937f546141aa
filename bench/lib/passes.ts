import { createAgentJwt, createDpopProof } from '@mandate/protocol';
import type { BenchAgent } from './seed.ts';

export interface TokenAnswer {
  access_token: string;
  refresh_token: string;
}

/** A pass from the real token endpoint (a first pass needs no refresh token within an hour of the approval). */
export async function fetchPass(origin: string, agent: BenchAgent, site: string, refreshToken?: string): Promise<TokenAnswer> {
  const body: Record<string, string> = { agent_id: agent.id, site, agent_jwt: await createAgentJwt(agent.privateKey, agent.id) };
  if (refreshToken !== undefined) body.refresh_token = refreshToken;
  const res = await fetch(`${origin}/api/v1/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`token endpoint answered ${res.status}: ${text}`);
  return JSON.parse(text) as TokenAnswer;
}

/** `n` fresh DPoP proofs (unique jti, iat now) for GET `url` with `pass`, signed in batches. */
export async function makeProofs(agent: BenchAgent, pass: string, url: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i += 1000) {
    const batch = Math.min(1000, n - i);
    out.push(...(await Promise.all(Array.from({ length: batch }, () => createDpopProof(agent.privateKey, agent.publicJwk, { htm: 'GET', htu: url, accessToken: pass })))));
  }
  return out;
}
