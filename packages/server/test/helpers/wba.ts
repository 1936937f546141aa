import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { ed25519Thumbprint, parseEd25519PublicJwk, signDirectory, type Ed25519PublicJwk } from '@mandate/protocol';
import { seconds } from '../../src/clock.ts';
import type { TestApp } from './app.ts';
import type { TestAgent } from './agents.ts';

export interface WbaKey {
  privateKey: KeyObject;
  jwk: Ed25519PublicJwk;
  keyid: string;
  /** The private JWK (for signing with other libraries). */
  privateJwk: JsonWebKey;
}

export function wbaKey(): WbaKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const jwk = parseEd25519PublicJwk(publicKey.export({ format: 'jwk' }));
  return { privateKey, jwk, keyid: ed25519Thumbprint(jwk), privateJwk: privateKey.export({ format: 'jwk' }) as JsonWebKey };
}

export interface Registered {
  signature_agent: string;
  host: string;
  directory: string;
}

export async function registerKey(t: TestApp, agent: TestAgent, key: WbaKey): Promise<Registered> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/wba/key', payload: { agent_id: agent.id, agent_jwt: await agent.jwt(), jwk: key.jwk } });
  if (res.statusCode !== 200) throw new Error(`wba/key: ${res.statusCode} ${res.body}`);
  return res.json() as Registered;
}

/** Registers the key and uploads a proof made at the test clock's time (lifetime 3600 s). */
export async function publishKey(t: TestApp, agent: TestAgent, key: WbaKey = wbaKey()): Promise<Registered & { key: WbaKey }> {
  const reg = await registerKey(t, agent, key);
  const headers = signDirectory({ authority: reg.host, body: reg.directory, key, created: seconds(t.clock.now()), lifetimeSec: 3600 });
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/wba/proof', payload: { agent_id: agent.id, agent_jwt: await agent.jwt(), headers } });
  if (res.statusCode !== 200) throw new Error(`wba/proof: ${res.statusCode} ${res.body}`);
  return { ...reg, key };
}
