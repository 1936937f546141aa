// An agent, from zero to verified requests, over plain HTTP: access request, approval, pass, calls to
// a site with DPoP, refresh, and a step-up for a sensitive action.
//   node --import tsx examples/quickstart/agent.ts <mandate-url> <agent-id> [key-file] [site-url]
// or set MANDATE_URL, AGENT_ID, AGENT_KEY_FILE and SITE_URL.
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createAgentJwt, createDpopProof, type EcP256PublicJwk } from '@mandate/protocol';

const [
  mandateUrl = process.env.MANDATE_URL ?? 'http://localhost:8080',
  agentId = process.env.AGENT_ID ?? '',
  keyFile = process.env.AGENT_KEY_FILE ?? join(homedir(), '.mandate', 'agent-key.json'), // as keygen.ts writes it
  siteUrl = process.env.SITE_URL ?? 'http://localhost:3000',
] = process.argv.slice(2);
if (!agentId) throw new Error('give the agent id (ag_...) the owner got when creating the agent');
const site = new URL(siteUrl).host; // the site id: its host name (with :port for a test server)

// The private JWK written by keygen.ts; the public half is its kty, crv, x and y.
const jwk = JSON.parse(readFileSync(keyFile, 'utf8')) as EcP256PublicJwk & { d: string };
const privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
const publicJwk: EcP256PublicJwk = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };
const agentJwt = () => createAgentJwt(privateKey, agentId); // fresh for each call, 5 minutes of life
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// --- Talking to Mandate -------------------------------------------------------------------------
type Json = Record<string, any>;

async function mandate(method: string, path: string, body?: Json, headers: Record<string, string> = {}): Promise<Json> {
  for (;;) {
    const res = await fetch(mandateUrl + path, {
      method,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const data = (await res.json().catch(() => ({}))) as Json;
    if (res.status === 429) { // too many calls: wait as told, then retry
      await sleep(Number(res.headers.get('retry-after') ?? 5) * 1000);
      continue;
    }
    if (!res.ok) {
      const detail = typeof data.detail === 'string' ? data.detail : JSON.stringify(data.detail);
      throw new Error(`${method} ${path}: ${res.status} ${detail}${data.next_step ? ` (next step: ${data.next_step})` : ''}`);
    }
    return data;
  }
}

// Polls a request until the owner has answered: pending -> approved | denied | expired.
async function waitForOwner(txnId: string, collectStepup = false): Promise<Json> {
  for (;;) {
    const headers: Record<string, string> = collectStepup ? { 'x-agent-jwt': await agentJwt() } : {};
    const r = await mandate('GET', `/api/v1/authz-requests/${txnId}`, undefined, headers);
    if (r.status !== 'pending') return r;
    await sleep(2000);
  }
}

// --- 1. Ask the owner for access -----------------------------------------------------------------
const asked = await mandate('POST', '/api/v1/authz-requests', {
  agent_id: agentId, site, scopes: ['list', 'pay'], agent_jwt: await agentJwt(),
});
console.log(`asked for access to ${site}; waiting for the owner (request ${asked.txn_id})`);
const answer = await waitForOwner(asked.txn_id);
if (answer.status !== 'approved') throw new Error(`the owner did not approve: ${answer.status}`);
console.log(`approved: scopes ${answer.scopes.join(' ')}`);

// --- 2. Get a pass, and renew it with the refresh token before it expires -------------------------
let token: Json = {};
let expiresAt = 0;

async function getPass(refreshToken?: string): Promise<void> {
  token = await mandate('POST', '/api/v1/token', {
    agent_id: agentId, site, agent_jwt: await agentJwt(),
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
  });
  expiresAt = Date.now() / 1000 + token.expires_in;
}

async function currentPass(): Promise<string> {
  // Refresh tokens are single use: each answer brings a new one and voids the one just sent.
  if (Date.now() / 1000 > expiresAt - 60) await getPass(token.refresh_token);
  return token.access_token;
}

await getPass();
console.log(`pass received, valid for ${token.expires_in} s`);

// --- 3. Call the site: the pass plus a fresh DPoP proof for this exact method and URL -------------
async function callSite(method: string, path: string, stepupToken?: string) {
  const accessToken = await currentPass();
  const url = siteUrl + path;
  const res = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${accessToken}`,
      dpop: await createDpopProof(privateKey, publicJwk, { htm: method, htu: url, accessToken }),
      ...(stepupToken ? { 'x-service-stepup': stepupToken } : {}),
    },
  });
  const text = await res.text();
  console.log(`${method} ${path} -> ${res.status} ${text}`);
  return { status: res.status, body: JSON.parse(text || '{}') as Json };
}

await callSite('GET', '/listings');

// Shown here once; currentPass() does it by itself within 60 s of the pass's expiry.
await getPass(token.refresh_token);
console.log('pass refreshed; the previous refresh token is used up');
await callSite('GET', '/listings');

// --- 4. A sensitive action needs the owner's one-time step-up -------------------------------------
const orderId = '42';
const first = await callSite('POST', `/orders/${orderId}/pay`);
if (first.status === 403 && first.body.error === 'stepup_required') {
  const action = `pay order ${orderId}`; // the exact action text the site checks
  const stepup = await mandate('POST', '/api/v1/stepup', { agent_id: agentId, site, action, agent_jwt: await agentJwt() });
  console.log(`asked the owner to approve "${action}" (request ${stepup.txn_id})`);
  const approved = await waitForOwner(stepup.txn_id, true); // X-Agent-JWT collects the token
  if (!approved.stepup_token) throw new Error(`no step-up: ${approved.status} ${approved.stepup_token_error ?? ''}`);
  // Single use, 60 s: send it with the very next try of the action.
  await callSite('POST', `/orders/${orderId}/pay`, approved.stepup_token);
}
