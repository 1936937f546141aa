// An agent as its own process, for the browser tests: it asks the owner for access, waits for the
// answer, gets its pass and has it checked the way a site would (POST /api/v1/verify with a DPoP
// proof). It prints one JSON line per event on stdout and never prints a token. After the pass it
// waits for commands on stdin: `verify` checks the pass again, `refresh` asks for a new pass with
// the refresh token, `exit` ends.
//   MANDATE_URL=... AGENT_ID=ag_... AGENT_KEY_FILE=key.json SITE=shop.example SCOPES=a,b [USER_INFO=user:email] \
//     node --import tsx agent-process.ts
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { createAgentJwt, createDpopProof, type EcP256PublicJwk } from '@mandate/protocol';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const service = env('MANDATE_URL');
const agentId = env('AGENT_ID');
const site = env('SITE');
const scopes = env('SCOPES').split(',');
const userInfo = (process.env.USER_INFO ?? '').split(',').filter(Boolean);
const jwk = JSON.parse(readFileSync(env('AGENT_KEY_FILE'), 'utf8')) as EcP256PublicJwk & { d: string };
const privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
const publicJwk: EcP256PublicJwk = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };

const say = (event: string, data: Record<string, unknown> = {}): void => {
  process.stdout.write(`${JSON.stringify({ event, ...data })}\n`);
};

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(service + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
}

const agentJwt = () => createAgentJwt(privateKey, agentId);

const asked = await call('POST', '/api/v1/authz-requests', { agent_id: agentId, site, scopes, user_info: userInfo, agent_jwt: await agentJwt() });
if (asked.status !== 200) {
  say('refused', { status: asked.status, detail: asked.body.detail });
  process.exit(1);
}
const txn = String(asked.body.txn_id);
say('requested', { txn_id: txn });

let answer: Record<string, unknown>;
for (;;) {
  const r = await call('GET', `/api/v1/authz-requests/${txn}`);
  if (r.status !== 200) {
    say('poll-failed', { status: r.status, detail: r.body.detail });
    process.exit(1);
  }
  if (r.body.status !== 'pending') {
    answer = r.body;
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 400));
}
say(String(answer.status), { scopes: answer.scopes });
if (answer.status !== 'approved') process.exit(1);

let token = await call('POST', '/api/v1/token', { agent_id: agentId, site, agent_jwt: await agentJwt() });
if (token.status !== 200) {
  say('token-refused', { status: token.status, detail: token.body.detail });
  process.exit(1);
}
say('pass', { scope: token.body.scope, expires_in: token.body.expires_in });

/** The pass checked as a site checks it: cloud verify with a fresh DPoP proof for one request. */
async function verify(): Promise<void> {
  const accessToken = String(token.body.access_token);
  const url = `https://${site}/orders`;
  const dpop = await createDpopProof(privateKey, publicJwk, { htm: 'GET', htu: url, accessToken });
  const r = await call('POST', '/api/v1/verify', { access_token: accessToken, dpop, method: 'GET', url, site });
  say('verified', { valid: r.body.valid, error: r.body.error, scopes: r.body.scopes, user_info: r.body.user_info });
}

await verify();
for await (const line of createInterface({ input: process.stdin })) {
  const command = line.trim();
  if (command === 'verify') await verify();
  else if (command === 'refresh') {
    const next = await call('POST', '/api/v1/token', { agent_id: agentId, site, agent_jwt: await agentJwt(), refresh_token: token.body.refresh_token });
    say('refreshed', { status: next.status, detail: next.body.detail });
    if (next.status === 200) token = next;
  } else if (command === 'exit') break;
}
process.exit(0);
