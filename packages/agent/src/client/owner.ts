import type { EcP256PublicJwk } from '@mandate/protocol';
import { MandateError } from './errors.ts';
import { ServiceClient, type FetchLike } from './http.ts';

export type RegisteredAgent = { id: string; name: string; jkt?: string };

/**
 * Registers an agent key on behalf of its owner, with the owner's email and password: signs in
 * (`POST /api/login`), creates the agent (`POST /api/agents`), and ends that session again
 * (`POST /api/logout`) so no owner credential outlives the call. The password is sent only to
 * the service's login endpoint and kept nowhere.
 */
export async function registerAgentAsOwner(opts: {
  serviceUrl: string;
  email: string;
  password: string;
  name: string;
  publicJwk: EcP256PublicJwk;
  fetch?: FetchLike;
}): Promise<RegisteredAgent> {
  const client = new ServiceClient({ serviceUrl: opts.serviceUrl, ...(opts.fetch ? { fetch: opts.fetch } : {}) });
  const login = await client.call<{ session_token?: unknown }>('POST', '/api/login', { body: { email: opts.email, password: opts.password } });
  if (typeof login.session_token !== 'string') throw new MandateError('service_error', { detail: 'the sign-in answer carries no session_token', method: 'POST', path: '/api/login' });
  const auth = { authorization: `Bearer ${login.session_token}` };
  try {
    const agent = await client.call<{ id?: unknown; name?: unknown; jkt?: unknown }>('POST', '/api/agents', { body: { name: opts.name, jwk: opts.publicJwk }, headers: auth });
    if (typeof agent.id !== 'string') throw new MandateError('service_error', { detail: 'the answer carries no agent id', method: 'POST', path: '/api/agents' });
    return { id: agent.id, name: typeof agent.name === 'string' ? agent.name : opts.name, ...(typeof agent.jkt === 'string' ? { jkt: agent.jkt } : {}) };
  } finally {
    await client.call('POST', '/api/logout', { headers: auth }).catch(() => undefined);
  }
}
