import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { launchChromium } from '../../packages/server/test/helpers/browser.ts';
import { type Child, runTs } from '../../packages/server/test/helpers/child-process.ts';
import { freePort, startServer, type ServerProcess } from '../../packages/server/test/helpers/server-process.ts';
import { until } from '../../packages/server/test/helpers/until.ts';
import { type OwnerTab, PHONE, openOwnerTab, requestCard, sessionCookie, signUp } from '../../packages/web/test/helpers/owner-app.ts';
import { type HttpsHost, startHttpsHost } from './helpers/https-host.ts';

// An MCP server protected by Mandate, with the official MCP SDK as the client, unchanged: its
// StreamableHTTPClientTransport with an OAuth provider whose client_id is a Client ID Metadata
// Document on an https host of the test's own. Real processes: the service, examples/mcp-server (cloud
// mode), the https host, and Chromium as the owner's phone with a passkey in a virtual authenticator.
// The SDK discovers Mandate from the server's 401 (RFC 9728), the owner consents once with the
// passkey, the read tool runs, the sensitive tool's scope is asked for by a 403 (the SDK goes through
// consent again), each call of the sensitive tool waits for the owner's approval of exactly that call,
// and revoking the app refuses its very next call.

let service: ServerProcess;
let browser: Browser;
let owner: OwnerTab;
let cimdHost: HttpsHost;
let example: Child;
let callback: Server;
let callbackUrl = '';
let resource = '';
let cookie = '';
const codes: string[] = [];

/** The MCP host's side of OAuth, kept in memory. It keeps no refresh token (see the scope step-up below). */
class HostProvider implements OAuthClientProvider {
  readonly authorizationUrls: URL[] = [];
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';
  readonly tokensSeen: OAuthTokens[] = [];

  constructor(readonly clientMetadataUrl: string) {}

  get redirectUrl(): string {
    return callbackUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'E2E Assistant', redirect_uris: [callbackUrl], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.info;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }

  // The SDK (1.32) answers a 403 insufficient_scope by refreshing first when it holds a refresh token,
  // which cannot add a scope (RFC 6749 §6), and then gives up; a host that keeps no refresh token goes
  // through consent again, as MCP's scope step-up intends.
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.tokensSeen.push(tokens);
    const { refresh_token: _kept, ...withoutRefresh } = tokens;
    this.saved = withoutRefresh;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrls.push(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }
}

before(async () => {
  browser = await launchChromium('MCP server e2e');
  callback = createServer((req, res) => {
    const url = new URL(req.url ?? '/', callbackUrl);
    const code = url.searchParams.get('code');
    if (code !== null) codes.push(code);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(code === null ? `not signed in: ${url.searchParams.get('error')}` : 'signed in: you may close this page');
  });
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
  cimdHost = await startHttpsHost((req, res) => {
    if (req.url !== '/mcp-client.json') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' }).end(JSON.stringify({
      client_id: `${cimdHost.origin}/mcp-client.json`, client_name: 'E2E Assistant', client_uri: cimdHost.origin,
      redirect_uris: [callbackUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none',
    }));
  });
  service = await startServer({ name: 'mandate', env: { DATABASE_URL: '', OUTBOUND_ALLOW_LOOPBACK: 'true', NODE_EXTRA_CA_CERTS: cimdHost.caFile } });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  resource = `${base}/mcp`;
  example = runTs('examples/mcp-server/server.ts', { env: { MANDATE_URL: service.baseUrl, MODE: 'cloud', PORT: String(port), PUBLIC_URL: base, APPROVAL_WAIT_SEC: '3' } });
  await example.waitFor('listening on', 60_000);

  owner = await openOwnerTab(browser, PHONE);
  await signUp(owner.page, service.baseUrl, `mcp.e2e.${Date.now()}@example.com`);
  await owner.page.locator('#passkey-setup').waitFor({ state: 'visible' });
  await owner.page.click('#passkey-setup-button');
  await owner.page.locator('#passkey-setup').waitFor({ state: 'hidden' });
  cookie = await sessionCookie(owner.context, service.baseUrl);
});

after(async () => {
  await owner?.context.close().catch(() => undefined);
  await browser?.close();
  await example?.stop();
  await service?.stop();
  await cimdHost?.close();
  callback?.closeAllConnections();
  callback?.close();
});

/** The owner opens the authorization link the SDK made, sees who asks for what, approves with the passkey; the code reaches the host. */
async function consent(page: Page, url: URL, expectScopes: string): Promise<string> {
  const before = codes.length;
  await page.goto(url.toString());
  assert.equal(await page.locator('h1').textContent(), 'Allow E2E Assistant?');
  assert.equal(await page.locator('#ac-what').textContent(), `E2E Assistant (${new URL(cimdHost.origin).host}) wants to act for you at ${resource} with ${expectScopes}.`);
  await page.waitForFunction(() => !(document.getElementById('cn-approve') as HTMLButtonElement).disabled);
  await page.click('#cn-approve');
  await page.waitForURL((u) => u.href.startsWith(callbackUrl), { timeout: 20_000 });
  const landed = new URL(page.url());
  assert.equal(landed.searchParams.get('iss'), service.baseUrl, 'RFC 9207: the issuer on the redirect');
  await until('the host got the code', () => (codes.length > before ? true : undefined));
  return codes[codes.length - 1] ?? '';
}

type Pending = { id: string; action?: string; details?: { summary: string } };

/** The owner's open site step-up for this tool, as the app lists it. */
async function pendingCall(tool: string, known: Set<string>): Promise<Pending> {
  return until(`the owner is asked about ${tool}`, async () => {
    const me = (await (await fetch(`${service.baseUrl}/api/me`, { headers: { cookie } })).json()) as { pending: Pending[] };
    return me.pending.find((p) => p.action === tool && !known.has(p.id));
  });
}

/** The owner answers the per-call card on the phone (approve needs the passkey). */
async function answerCard(page: Page, txn: string, answer: 'Approve' | 'Deny', summary: string): Promise<void> {
  await page.goto(`${service.baseUrl}/app#requests`);
  const card = await requestCard(page, txn);
  const text = (await card.textContent()) ?? '';
  assert.match(text, new RegExp(`E2E Assistant \\(${new URL(cimdHost.origin).host.replaceAll('.', '\\.')}\\) asks to run delete_note at ${resource.replaceAll('.', '\\.')}`));
  assert.ok(text.includes(summary), `the card shows the call's summary: ${text}`);
  assert.match(text, /bound to exactly these arguments/);
  await card.getByRole('button', { name: answer }).click();
  await card.locator(answer === 'Approve' ? '.outcome.ok' : '.outcome').waitFor({ timeout: 20_000 });
}

const textOf = (r: CallToolResult): string => (r.content[0] as { text: string }).text;

test('the MCP SDK client, unchanged, through discovery, consent with a passkey, a scope step-up, per-call approvals and revocation', { timeout: 240_000 }, async () => {
  const provider = new HostProvider(`${cimdHost.origin}/mcp-client.json`);
  const connect = async (): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> => {
    const client = new Client({ name: 'e2e-host', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider });
    await client.connect(transport);
    return { client, transport };
  };

  // 1. No pass: the 401 sends the SDK to Mandate (the server's RFC 9728 metadata), which takes the
  //    metadata document's URL as client_id; the SDK asks the host to open the authorization link.
  await assert.rejects(connect(), UnauthorizedError);
  const first = provider.authorizationUrls.at(-1);
  assert.ok(first, 'the SDK asked to open an authorization link');
  assert.equal(first.origin + first.pathname, `${service.baseUrl}/oidc/authorize`);
  assert.equal(first.searchParams.get('client_id'), `${cimdHost.origin}/mcp-client.json`);
  assert.equal(first.searchParams.get('resource'), resource);
  assert.equal(first.searchParams.get('code_challenge_method'), 'S256');

  // 2. The owner approves the app once with the passkey; the SDK redeems the code for a resource pass.
  const code = await consent(owner.page, first, 'notes:read');
  assert.ok(cimdHost.requests.some((r) => r.path === '/mcp-client.json'), 'Mandate fetched the metadata document over https');
  const pending = new StreamableHTTPClientTransport(new URL(resource), { authProvider: provider });
  await pending.finishAuth(code);
  const pass = provider.tokensSeen.at(-1);
  assert.equal(pass?.token_type, 'Bearer', 'a keyless client gets a bearer pass');
  const claims = JSON.parse(Buffer.from(pass.access_token.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;
  assert.equal(claims['aud'], resource);
  assert.equal(claims['client_id'], `${cimdHost.origin}/mcp-client.json`);
  assert.deepEqual(claims['scope'], ['notes:read']);
  assert.equal(claims['cnf'], undefined);

  // 3. Connected: the read tool runs.
  const { client, transport } = await connect();
  const tools = await client.listTools();
  assert.deepEqual(tools.tools.map((t) => t.name).sort(), ['delete_note', 'list_notes']);
  const notes = await client.callTool({ name: 'list_notes', arguments: {} }) as CallToolResult;
  assert.equal(notes.isError, undefined, textOf(notes));
  assert.match(textOf(notes), /Trip to Lisbon/);

  // 4. The sensitive tool needs notes:write: a 403 insufficient_scope, and the SDK asks for it.
  const asked = provider.authorizationUrls.length;
  await assert.rejects(client.callTool({ name: 'delete_note', arguments: { title: 'Trip to Lisbon' } }), UnauthorizedError);
  const upscope = provider.authorizationUrls.at(-1);
  assert.ok(upscope && provider.authorizationUrls.length === asked + 1, 'a second authorization link, for the larger scope');
  assert.deepEqual(upscope.searchParams.get('scope')?.split(' ').sort(), ['notes:read', 'notes:write']);
  await transport.finishAuth(await consent(owner.page, upscope, 'notes:read, notes:write'));

  // 5. Each call of the sensitive tool waits for the owner's approval of exactly that call.
  const known = new Set<string>();
  const waiting = await client.callTool({ name: 'delete_note', arguments: { title: 'Trip to Lisbon' } }) as CallToolResult;
  assert.equal(waiting.isError, true);
  assert.match(textOf(waiting), /call this tool again with the same arguments/);
  const call = await pendingCall('delete_note', known);
  known.add(call.id);
  await answerCard(owner.page, call.id, 'Approve', 'Delete note Trip to Lisbon');
  const done = await client.callTool({ name: 'delete_note', arguments: { title: 'Trip to Lisbon' } }) as CallToolResult;
  assert.equal(done.isError, undefined, textOf(done));
  const after = await client.callTool({ name: 'list_notes', arguments: {} }) as CallToolResult;
  assert.doesNotMatch(textOf(after), /Trip to Lisbon/, 'deleted, once');

  // Other arguments ask again; the owner denies: a tool error, and nothing deleted.
  const other = await client.callTool({ name: 'delete_note', arguments: { title: 'Book club' } }) as CallToolResult;
  assert.match(textOf(other), /call this tool again/);
  const second = await pendingCall('delete_note', known);
  known.add(second.id);
  await answerCard(owner.page, second.id, 'Deny', 'Delete note Book club');
  const denied = await client.callTool({ name: 'delete_note', arguments: { title: 'Book club' } }) as CallToolResult;
  assert.equal(denied.isError, true);
  assert.match(textOf(denied), /denied/i);
  assert.match(textOf(await client.callTool({ name: 'list_notes', arguments: {} }) as CallToolResult), /Book club/);

  // 6. The owner revokes the app: its very next call is refused (cloud mode asks Mandate every time),
  //    and the SDK goes back to the authorization link rather than using anything it held.
  const apps = (await (await fetch(`${service.baseUrl}/api/agents`, { headers: { cookie } })).json()) as { id: string; kind: string; client_id: string | null }[];
  const app = apps.find((a) => a.kind === 'app' && a.client_id === `${cimdHost.origin}/mcp-client.json`);
  assert.ok(app, 'the app is listed among the agents');
  const revoked = await fetch(`${service.baseUrl}/api/agents/${app.id}`, { method: 'DELETE', headers: { cookie, origin: service.baseUrl } });
  assert.ok(revoked.ok, `revoke: ${revoked.status}`);
  const raw = await fetch(resource, {
    method: 'POST',
    headers: { authorization: `Bearer ${provider.tokens()?.access_token ?? ''}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'list_notes', arguments: {} } }),
  });
  assert.equal(raw.status, 401);
  assert.match(raw.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  const links = provider.authorizationUrls.length;
  await assert.rejects(client.callTool({ name: 'list_notes', arguments: {} }), UnauthorizedError);
  assert.equal(provider.authorizationUrls.length, links + 1, 'the SDK asks for consent again');
  await client.close();
  assert.deepEqual(owner.problems, []);
});
