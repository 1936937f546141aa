import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateAgentKeyPair } from '@mandate/protocol';
import { MandateAgent } from '@mandate/agent';
import { exportJWK } from 'jose';
import { followAuthorize } from '../../examples/oidc-agent/follow-authorize.ts';
import { HttpOwner } from '../../packages/server/test/helpers/over-http.ts';
import { startServer, type ServerProcess } from '../../packages/server/test/helpers/server-process.ts';
import { sleep, until } from '../../packages/server/test/helpers/until.ts';
import { WordPressSite } from './helpers/wordpress.ts';

// The WordPress plugin end to end, every part a real process: the Mandate service, Debian's
// WordPress on PHP's built-in server with MariaDB, the plugin installed from the zip the service
// serves at /download/wordpress (unpacked by WordPress's own unzip_file) and configured with an OIDC
// client registered at the service. The agent is the real @mandate/agent SDK; the test plays the
// owner over HTTP (passkey approvals, removing the agent). The tests build on each other in order.

type Json = Record<string, unknown>;

/** A browser's cookies for one site (the agent's "browser" during sign-in); redirects are not followed. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((s) => s.trim());
      const name = pair.slice(0, pair.indexOf('='));
      const value = pair.slice(pair.indexOf('=') + 1);
      const expired = attributes.some((a) => /^max-age=0$/i.test(a) || (/^expires=/i.test(a) && Date.parse(a.slice(8)) <= Date.now()));
      if (expired || value === '' || value === 'deleted') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }
}

describe('the WordPress plugin with a real WordPress, Mandate service and agent', () => {
  let server: ServerProcess;
  let owner: HttpOwner;
  let wp: WordPressSite;
  let agent: MandateAgent;
  let agentId = '';
  let site = '';
  let postId = 0;
  const jar = new CookieJar();
  const zipDir = mkdtempSync(join(tmpdir(), 'mandate-wp-zip-'));

  const logs = () => `--- mandate\n${server?.logs() ?? ''}\n--- wordpress\n${wp?.logs() ?? ''}`;
  const api = (path: string) => `${wp.url}/wp-json${path}`;
  const body = async (res: Response): Promise<Json> => (await res.json()) as Json;

  /** The owner approves every card of this agent that shows up while `work` runs (kind: initial, stepup, oidc). */
  async function whileOwnerApproves<T>(work: Promise<T>, kinds: (card: Json) => boolean = () => true): Promise<T> {
    let done = false;
    const finished = work.finally(() => (done = true));
    const phone = (async () => {
      while (!done) {
        const card = (await owner.pending()).find((p) => p.agent_id === agentId && kinds(p as unknown as Json));
        if (card) await owner.approve(card.id);
        else await sleep(100);
      }
    })();
    const [result] = await Promise.all([finished, phone]);
    return result;
  }

  before(async () => {
    server = await startServer({ name: 'mandate', env: { OUTBOUND_ALLOW_LOOPBACK: 'true', OUTBOX_POLL_MS: '200' } });
    owner = await HttpOwner.signUp(server, server.baseUrl, { label: 'wordpress' });
    const { privateKey, publicJwk } = await generateAgentKeyPair();
    agentId = await owner.createAgent('Blogger', publicJwk);
    agent = new MandateAgent({ serviceUrl: server.baseUrl, agentId, privateKey: await exportJWK(privateKey) });
    wp = await WordPressSite.start();
    site = new URL(wp.url).host;

    // The site owner's steps of docs/sites/wordpress.md: the zip from the service, the client registered.
    const download = await fetch(`${server.url}/download/wordpress`);
    assert.equal(download.status, 200, await download.clone().text());
    const filename = /filename="([^"]+)"/.exec(download.headers.get('content-disposition') ?? '')?.[1] ?? '';
    assert.match(filename, /^mandate-wordpress-\d+\.\d+\.\d+\.zip$/);
    const zip = join(zipDir, filename);
    writeFileSync(zip, Buffer.from(await download.arrayBuffer()));
    const client = await owner.ok<{ client_id: string; client_secret: string }>('POST', '/api/oidc/clients', {
      name: 'WordPress blog',
      redirect_uris: [`${wp.url}/wp-json/mandate/v1/callback`],
      backchannel_logout_uri: `${wp.url}/wp-json/mandate/v1/backchannel-logout`,
    });
    const settings = {
      service_url: server.baseUrl,
      client_id: client.client_id,
      client_secret: client.client_secret,
      site_id: site,
      scope_caps: 'posts:write = read, edit_posts, publish_posts, edit_published_posts, delete_posts, delete_published_posts',
      agent_routes: ['# what agents may call, and the sensitive one', 'POST /wp/v2/posts posts:write', 'DELETE /wp/v2/posts/(?P<id>\\d+) posts:write | delete post {id}'].join('\n'),
      ciba_routes: 'POST /wp/v2/pages | Publish a page on the Mandate test blog',
      new_user_role: 'editor',
    };
    const out = wp.wp(`
      WP_Filesystem();
      $unzipped = unzip_file($argv[1], WP_PLUGIN_DIR);
      if (is_wp_error($unzipped)) { echo 'unzip: ', $unzipped->get_error_message(); exit(1); }
      $active = activate_plugin('mandate/mandate.php');
      if (is_wp_error($active)) { echo 'activate: ', $active->get_error_message(); exit(1); }
      update_option('permalink_structure', '/%postname%/');
      flush_rewrite_rules();
      update_option('mandate_settings', Mandate_Settings::sanitize(json_decode($argv[2], true)));
      echo 'configured';`, zip, JSON.stringify(settings));
    assert.equal(out, 'configured');
  });

  after(async () => {
    await wp?.stop();
    await server?.stop();
    rmSync(zipDir, { recursive: true, force: true });
  });

  it('a guarded route: 401 without a pass; with the owner\'s approval, the agent\'s pass and DPoP proof create a post as the agent\'s own user', async () => {
    const anonymous = await fetch(api('/wp/v2/posts'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"title":"x"}' });
    assert.equal(anonymous.status, 401);
    assert.deepEqual(await body(anonymous), {
      error: 'invalid_request', error_description: 'no Mandate pass in this request: send Authorization: Bearer <pass> and DPoP: <proof>',
      code: 'invalid_request', message: 'no Mandate pass in this request: send Authorization: Bearer <pass> and DPoP: <proof>', data: { status: 401 },
    });

    await whileOwnerApproves(agent.requestAccessAndWait({ site, scopes: ['posts:write'] }, { intervalMs: 200 }), (c) => c['kind'] === 'initial');
    const created = await agent.fetch(api('/wp/v2/posts'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Written by an agent', content: 'Hello', status: 'publish' }) });
    const post = await body(created);
    assert.equal(created.status, 201, `${JSON.stringify(post)}\n${logs()}`);
    postId = Number(post['id']);
    const author = await body(await fetch(api(`/wp/v2/users/${String(post['author'])}`)));
    assert.equal(author['name'], 'Blogger', 'the post\'s author is the agent\'s WordPress user');

    const forged = await fetch(api('/wp/v2/posts'), { method: 'POST', headers: { authorization: `DPoP ${(await agent.pass(site)).accessToken}`, dpop: 'not-a-proof' } });
    assert.equal(forged.status, 401);
    assert.equal((await body(forged))['error'], 'invalid_dpop');
  });

  it('a sensitive route: 403 stepup_required with the action; the owner approves it, and the agent\'s retry with X-Service-Stepup deletes the post', async () => {
    const url = api(`/wp/v2/posts/${postId}?force=true`);
    const refused = await agent.fetch(url, { method: 'DELETE' }, { stepup: false });
    assert.equal(refused.status, 403);
    const answer = await body(refused);
    assert.deepEqual([answer['error'], answer['action'], answer['code']], ['stepup_required', `delete post ${postId}`, 'stepup_required']);

    const deleted = await whileOwnerApproves(agent.fetch(url, { method: 'DELETE' }, { stepupWait: { intervalMs: 200 } }), (c) => c['kind'] === 'stepup' && c['action'] === `delete post ${postId}`);
    assert.equal(deleted.status, 200, `${await deleted.clone().text()}\n${logs()}`);
    assert.equal((await body(deleted))['deleted'], true);
    assert.equal((await fetch(api(`/wp/v2/posts/${postId}`))).status, 404);
  });

  it('Sign in with Mandate: the agent follows the code flow with PKCE, its WordPress user is linked to the pairwise sub, and it is signed in', async () => {
    const start = await jar.fetch(api('/mandate/v1/sign-in'));
    assert.equal(start.status, 302, await start.text());
    const authorize = start.headers.get('location') ?? '';
    const q = new URL(authorize).searchParams;
    assert.ok(authorize.startsWith(`${server.baseUrl}/oidc/authorize?`), authorize);
    assert.deepEqual([q.get('response_type'), q.get('code_challenge_method'), q.get('redirect_uri')], ['code', 'S256', `${wp.url}/wp-json/mandate/v1/callback`]);

    const back = await whileOwnerApproves(followAuthorize(agent, authorize, 100));
    assert.ok(back.startsWith(`${wp.url}/wp-json/mandate/v1/callback?`), back);
    const callback = await jar.fetch(back);
    assert.equal(callback.status, 302, `${await callback.text()}\n${logs()}`);
    assert.equal(callback.headers.get('location'), `${wp.url}/wp-admin/`);
    const profile = await jar.fetch(`${wp.url}/wp-admin/profile.php`);
    assert.equal(profile.status, 200, 'signed in to wp-admin');
    assert.match(await profile.text(), /Blogger \(agent of /);
    const linked = wp.wp("$u = get_users(array('meta_key' => 'mandate_sub', 'fields' => 'all')); echo count($u), ' ', $u[0]->display_name, ' ', strlen(get_user_meta($u[0]->ID, 'mandate_sub', true)) >= 16 ? 'sub' : 'none';");
    assert.match(linked, /^1 Blogger \(agent of .+\) sub$/);

    const replayed = await jar.fetch(back);
    assert.equal(replayed.status, 400, 'the same callback again is refused');
  });

  it('a CIBA-confirmed action: 202 confirmation_pending while the owner is asked; once confirmed, the same request publishes the page', async () => {
    const nonce = await (await jar.fetch(`${wp.url}/wp-admin/admin-ajax.php?action=rest-nonce`)).text();
    assert.match(nonce, /^[0-9a-f]{10}$/);
    const publish = () => jar.fetch(api('/wp/v2/pages'), { method: 'POST', headers: { 'content-type': 'application/json', 'x-wp-nonce': nonce }, body: JSON.stringify({ title: 'Confirmed page', status: 'publish' }) });
    const first = await publish();
    const pending = await body(first);
    assert.equal(first.status, 202, `${JSON.stringify(pending)}\n${logs()}`);
    assert.equal(pending['error'], 'confirmation_pending');
    const card = await until('the CIBA card', async () => (await owner.pending()).find((p) => (p as unknown as { sign_in?: { flow: string } }).sign_in?.flow === 'ciba'), { ms: 10_000 });
    assert.equal((card as unknown as { sign_in: { binding_message: string } }).sign_in.binding_message, 'Publish a page on the Mandate test blog');
    await owner.approve(card.id);
    let res = first;
    for (let i = 0; i < 6 && res.status === 202; i++) {
      await sleep(Number(res.headers.get('retry-after') ?? 5) * 1000);
      res = await publish();
    }
    assert.equal(res.status, 201, `${await res.clone().text()}\n${logs()}`);
    assert.equal((await body(res))['status'], 'publish');
    const again = await publish();
    assert.equal(again.status, 202, 'the confirmation was used up: the next one is asked anew');
  });

  it('the owner removes the agent: Mandate\'s back-channel logout ends its WordPress session, and its pass is refused', async () => {
    const forged = await fetch(api('/mandate/v1/backchannel-logout'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'logout_token=e30.e30.' });
    assert.equal(forged.status, 400);
    assert.equal((await jar.fetch(`${wp.url}/wp-admin/profile.php`)).status, 200, 'a forged token ends nothing');

    await owner.ok('DELETE', `/api/agents/${agentId}`);
    await until('the WordPress session to end', async () => ((await jar.fetch(`${wp.url}/wp-admin/profile.php`)).status === 302 ? true : undefined), { ms: 15_000, describe: logs });
    assert.match(wp.logs(), /back-channel logout: sign-in \S+ ended \(1 sessions\)/);

    const pass = await agent.pass(site, { force: true }).catch(() => undefined);
    assert.equal(pass, undefined, 'no pass for a removed agent');
  });
});
