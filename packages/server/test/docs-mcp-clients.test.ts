/**
 * docs/sites/oidc.md, "MCP clients and other apps without an owner", cannot rot: the metadata
 * document shown, served at its own URL by a local site, is accepted as the client it describes;
 * the registration curl's body, sent as written, answers what the guide shows (but the id and time).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FixedClock } from '../src/clock.ts';
import { expectStatus, json, testApp, type TestApp } from './helpers/app.ts';
import { markedBlocks } from './helpers/doc-examples.ts';
import { GUIDE } from './helpers/oidc-guide.ts';
import { MetadataDocumentSite } from './helpers/stand-ins/metadata-documents.ts';

const { block } = markedBlocks(GUIDE);

describe(`${GUIDE}: MCP clients`, () => {
  let t: TestApp;
  let site: MetadataDocumentSite;
  before(async () => {
    site = await new MetadataDocumentSite().start();
    t = await testApp({ env: { OUTBOUND_ALLOW_LOOPBACK: 'true' }, clock: new FixedClock(Date.now()) });
  });
  after(async () => {
    await t.close();
    await site.stop();
    assert.deepEqual(site.problems, []);
  });

  it('the metadata document shown is accepted, at its own URL, as the public client it describes', async () => {
    const shown = JSON.parse(block('answer', 'metadata-document')) as { client_id: string; client_name: string; redirect_uris: string[] };
    const path = new URL(shown.client_id).pathname;
    const url = site.serve(path, { body: { ...shown, client_id: `${site.origin}${path}` } });
    const client = await t.services.oidc.deps.metadataDocuments.client(url);
    assert.deepEqual([client.kind, client.isPublic, client.name, client.redirectUris], ['metadata_document', true, shown.client_name, shown.redirect_uris]);
  });

  it('the registration curl answers what the guide shows, but for the id and the time', async () => {
    const curl = block('request', 'register-public-client');
    assert.match(curl, /curl -s "\$MANDATE\/oidc\/register"/);
    const body = /-d '([^']*)'/.exec(curl)?.[1] ?? '';
    const res = await t.app.inject({ method: 'POST', url: '/oidc/register', headers: { 'content-type': 'application/json' }, payload: body });
    expectStatus(res, 201);
    const got = json<Record<string, unknown>>(res);
    const shown = JSON.parse(block('answer', 'register-public-client')) as Record<string, unknown>;
    assert.match(String(shown.client_id), /^rc_[a-z2-7]{26}$/);
    assert.match(String(got.client_id), /^rc_[a-z2-7]{26}$/);
    assert.deepEqual({ ...got, client_id: shown.client_id, client_id_issued_at: shown.client_id_issued_at }, shown);
  });
});
