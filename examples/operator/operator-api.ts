// Mandate's operator API, called by this operator's servers with HTTP Basic: the operator id as user
// name, the secret as password. The secret goes into the Authorization header and nowhere else (no
// log line, no error message carries it).
import type { EcP256PublicJwk } from '@mandate/protocol';
import type { OperatorConfig } from './config.ts';

/** What the code exchange gives: the person's connection to this operator. */
export type Connection = { connection_id: string; sub: string; max_agents: number };
export type CreatedAgent = { agent_id: string; name: string; browser: string };
export type OperatorAgent = CreatedAgent & { connection_id: string; status: string; created_at: string };
export type ConnectionState = Connection & { status: string; created_at: string; agents: number };

export class OperatorApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

export class OperatorApi {
  readonly #baseUrl: string;
  readonly #authorization: string;

  constructor(cfg: Pick<OperatorConfig, 'mandateUrl' | 'operatorId' | 'operatorSecret'>) {
    this.#baseUrl = cfg.mandateUrl;
    this.#authorization = `Basic ${Buffer.from(`${cfg.operatorId}:${cfg.operatorSecret}`).toString('base64')}`;
  }

  /** The one-time code from the callback, within 60 seconds, with the verifier kept for it. */
  exchangeCode(code: string, codeVerifier: string, redirectUri: string): Promise<Connection> {
    return this.#call('POST', '/api/v1/operator/token', { code, code_verifier: codeVerifier, redirect_uri: redirectUri });
  }

  /** Only the public half of the key is sent; Mandate names the agent "<name> (via <operator>)". */
  createAgent(connectionId: string, name: string, jwk: EcP256PublicJwk): Promise<CreatedAgent> {
    return this.#call('POST', '/api/v1/operator/agents', { connection_id: connectionId, name, jwk });
  }

  listAgents(connectionId = ''): Promise<OperatorAgent[]> {
    return this.#call('GET', `/api/v1/operator/agents${connectionId ? `?connection_id=${encodeURIComponent(connectionId)}` : ''}`);
  }

  removeAgent(agentId: string): Promise<unknown> {
    return this.#call('DELETE', `/api/v1/operator/agents/${encodeURIComponent(agentId)}`);
  }

  listConnections(): Promise<ConnectionState[]> {
    return this.#call('GET', '/api/v1/operator/connections');
  }

  /** Ends the connection for good: its agents stop everywhere; the person must connect again. */
  endConnection(connectionId: string): Promise<unknown> {
    return this.#call('DELETE', `/api/v1/operator/connections/${encodeURIComponent(connectionId)}`);
  }

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(this.#baseUrl + path, {
      method,
      headers: { authorization: this.#authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    const data = parseJson(text) as (T & { detail?: unknown }) | null;
    if (!res.ok) {
      // Mandate says what went wrong in `detail`: 401 wrong secret, 403 operator not switched on or
      // connection ended or at its agent limit, 400 a spent code (`invalid_grant`).
      const detail = typeof data?.detail === 'string' ? data.detail : JSON.stringify(data?.detail ?? text);
      throw new OperatorApiError(res.status, `${method} ${path.split('?')[0]}: ${res.status} ${detail}`);
    }
    return data as T;
  }
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return { detail: `not JSON: ${text.slice(0, 200)}` }; // a proxy's error page, say
  }
}
