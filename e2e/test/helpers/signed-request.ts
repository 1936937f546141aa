import { loadKeyFile } from '@mandate/agent';
import { createDpopProof } from '../../../packages/protocol/src/index.ts';
import type { AgentCli } from './cli.ts';

/**
 * A request to a shop made by the test itself, signed as the CLI's agent: its pass (taken from the
 * CLI with `token --show`) and a fresh DPoP proof with the key in the agent's directory. The CLI
 * reacts to refusals (it renews the pass after `grant_revoked`, asks for a step-up after
 * `stepup_required`); this shows the shop's own answer, unretried.
 */
export type ShopAnswer = { status: number; error: string | undefined; body: Record<string, unknown> };

export async function signedRequest(
  agent: AgentCli,
  pass: string,
  url: string,
  opts: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<ShopAnswer> {
  const method = opts.method ?? 'GET';
  const { key } = loadKeyFile(agent.dir);
  const dpop = await createDpopProof(key.privateKey, key.publicJwk, { htm: method, htu: url, accessToken: pass });
  const res = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${pass}`,
      dpop,
      ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...opts.headers,
    },
    ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }),
  });
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { text };
  }
  return { status: res.status, error: typeof body['error'] === 'string' ? body['error'] : undefined, body };
}

/** `401 grant_revoked` etc., or `200`: the answer in one comparable string. */
export function outcome(a: ShopAnswer): string {
  return a.error === undefined ? String(a.status) : `${a.status} ${a.error}`;
}
