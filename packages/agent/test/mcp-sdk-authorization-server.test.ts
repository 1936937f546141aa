import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { discoverAuthorizationServerMetadata, exchangeAuthorization, registerClient, startAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { HttpOwner, expectStatus, remoteAccessRequest, remoteAgent, remoteDecide, type RemoteAgent } from '../../server/test/helpers/over-http.ts';
import { startServer, type ServerProcess } from '../../server/test/helpers/server-process.ts';
import { oidcAuthorizeHeaders } from '../src/oidc-sign-in.ts';

// Mandate as the authorization server of the official MCP SDK's OAuth client (decisions §28), against
// the real service: the SDK discovers it, registers itself (RFC 7591) or names a Client ID Metadata
// Document, builds the authorize URL and exchanges the code, all unchanged. The person's browser
// step is a later part; here the agent sends the SDK's authorize URL with its own header, holding a
// live grant at the redirect URI's host, so the answer is a code at once.

describe('the MCP SDK OAuth client against Mandate', () => {
  let server: ServerProcess;
  let agent: RemoteAgent;
  let metadata: AuthorizationServerMetadata;
  let docs: Server;
  let docsOrigin: string;
  const documents = new Map<string, unknown>();

  /** The agent follows the SDK's authorize URL and answers the code it is redirected with. */
  const codeFor = async (authorizationUrl: URL, redirectUri: string): Promise<string> => {
    const res = await fetch(authorizationUrl, { redirect: 'manual', headers: await oidcAuthorizeHeaders(agent.privateKey, agent.id, authorizationUrl.href) });
    assert.equal(res.status, 302, await res.text());
    const to = new URL(res.headers.get('location') ?? '');
    assert.equal(`${to.origin}${to.pathname}`, redirectUri);
    assert.equal(to.searchParams.get('iss'), server.baseUrl);
    return to.searchParams.get('code') ?? '';
  };

  before(async () => {
    docs = createServer((req, res) => {
      const doc = documents.get(req.url ?? '');
      if (doc === undefined) res.writeHead(404).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    });
    await new Promise<void>((resolve) => docs.listen(0, '127.0.0.1', resolve));
    docsOrigin = `http://127.0.0.1:${(docs.address() as AddressInfo).port}`;
    server = await startServer({ name: 'MCP SDK authorization server', env: { OUTBOUND_ALLOW_LOOPBACK: 'true' } });
    const owner = await HttpOwner.signUp(server, server.baseUrl);
    agent = await remoteAgent(server, owner, 'MCP host');
    // The SDK's clients below redirect to the documents' host: the agent's grant there covers the sign-in.
    const txn = expectStatus(await remoteAccessRequest(server, agent, new URL(docsOrigin).host, ['openid', 'profile']), 200, 'access request').body.txn_id;
    expectStatus(await remoteDecide(server, owner, txn), 200, 'approve');
    const found = await discoverAuthorizationServerMetadata(server.baseUrl);
    assert.ok(found, 'discovered');
    metadata = found;
  });
  after(async () => {
    await server?.stop();
    docs.closeAllConnections();
    await new Promise<void>((resolve) => docs.close(() => resolve()));
  });

  it('discovers what the SDK looks for', () => {
    assert.equal(metadata.issuer, server.baseUrl);
    assert.equal(metadata.registration_endpoint, `${server.baseUrl}/oidc/register`);
    assert.equal((metadata as Record<string, unknown>).client_id_metadata_document_supported, true);
    assert.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
    assert.ok(metadata.token_endpoint_auth_methods_supported?.includes('none'));
  });

  it('registers itself (RFC 7591), then signs in with PKCE and no secret', async () => {
    const redirectUri = `${docsOrigin}/callback`;
    const info = await registerClient(server.baseUrl, {
      metadata,
      clientMetadata: { client_name: 'SDK client', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
    });
    assert.match(info.client_id, /^rc_/);
    assert.equal(info.client_secret, undefined);
    const { authorizationUrl, codeVerifier } = await startAuthorization(server.baseUrl, { metadata, clientInformation: info, redirectUrl: redirectUri, scope: 'openid profile', state: 'sdk-state' });
    const tokens = await exchangeAuthorization(server.baseUrl, { metadata, clientInformation: info, authorizationCode: await codeFor(authorizationUrl, redirectUri), codeVerifier, redirectUri });
    assert.equal(decodeJwt(tokens.access_token).client_id, info.client_id);
    assert.ok(tokens.refresh_token);
  });

  it('names its Client ID Metadata Document as client_id, then signs in the same way', async () => {
    const redirectUri = `${docsOrigin}/callback`;
    const clientId = `${docsOrigin}/oauth/client-metadata.json`;
    documents.set('/oauth/client-metadata.json', { client_id: clientId, client_name: 'SDK client (CIMD)', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' });
    const info = { client_id: clientId };
    const { authorizationUrl, codeVerifier } = await startAuthorization(server.baseUrl, { metadata, clientInformation: info, redirectUrl: redirectUri, scope: 'openid profile' });
    const tokens = await exchangeAuthorization(server.baseUrl, { metadata, clientInformation: info, authorizationCode: await codeFor(authorizationUrl, redirectUri), codeVerifier, redirectUri });
    assert.equal(decodeJwt(tokens.access_token).client_id, clientId);
  });

  it('a registration the service refuses reaches the SDK as an OAuth error', async () => {
    await assert.rejects(
      registerClient(server.baseUrl, { metadata, clientMetadata: { client_name: 'Confidential', redirect_uris: [`${docsOrigin}/callback`], token_endpoint_auth_method: 'client_secret_basic' } }),
      (e: unknown) => {
        assert.match(String((e as Error).message), /token_endpoint_auth_method must be "none"/);
        return true;
      },
    );
  });
});
