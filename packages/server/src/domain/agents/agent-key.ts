import { createPublicKey, type KeyObject } from 'node:crypto';
import { type EcP256PublicJwk, JwkError, parsePublicP256Jwk } from '@mandate/protocol';
import type { AgentRecord } from '../../store/ports/index.ts';
import { badRequest } from '../errors.ts';

/**
 * The agent's public key from `AgentIn`: exactly one of `jwk` (object) or `pubkey` (PEM). Anything
 * that is not a public EC P-256 key, or that carries private parts, is refused with 400.
 */
export function agentPublicKey(input: { jwk?: unknown; pubkey?: string | null }): EcP256PublicJwk {
  const hasJwk = input.jwk !== undefined && input.jwk !== null;
  const hasPem = typeof input.pubkey === 'string' && input.pubkey.trim() !== '';
  if (hasJwk === hasPem) throw badRequest('send the agent public key as exactly one of jwk (object) or pubkey (PEM)');
  try {
    if (hasJwk) return parsePublicP256Jwk(input.jwk);
    return parsePublicP256Jwk(pemToJwk(input.pubkey as string));
  } catch (e) {
    if (e instanceof JwkError) throw badRequest(`invalid agent key: ${e.message}`);
    throw e;
  }
}

function pemToJwk(pem: string): unknown {
  if (/PRIVATE KEY/.test(pem)) throw new JwkError('the PEM holds a private key; send only the public key');
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new JwkError('pubkey is not a PEM public key');
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new JwkError('the key must be EC on curve P-256');
  }
  return key.export({ format: 'jwk' });
}

/**
 * The thumbprint of an agent's key, for binding what it is given (passes, step-up tokens) to it.
 * An app (decisions §28) has no key and is never given these: asking for its key is a bug, refused
 * loudly rather than minting something bound to nothing.
 */
export function agentJkt(agent: Pick<AgentRecord, 'id' | 'kind' | 'jkt'>): string {
  if (agent.kind !== 'agent' || agent.jkt === null) throw new Error(`agent ${agent.id} is an app and has no key`);
  return agent.jkt;
}
