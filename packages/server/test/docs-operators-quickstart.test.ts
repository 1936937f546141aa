/**
 * docs/operators/quickstart.md cannot rot: every fenced block is marked; the blocks quoted from
 * examples/operator are in those files as they stand (e2e/test/operator.test.ts runs the example
 * itself); the settings and commands it shows are the example's; each curl is sent to a service as
 * written (the example ids and key replaced by real ones) and the answers shown have the shape, and
 * the fixed values, the service answers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateAgentKeyPair } from '@mandate/protocol';
import { expectStatus, json, signUp, testApp, type TestApp } from './helpers/app.ts';
import { type Owner, ownerWithPasskey } from './helpers/approvals.ts';
import { REPO_ROOT } from './helpers/child-process.ts';
import { markedBlocks } from './helpers/doc-examples.ts';
import { verifyEmail } from './helpers/email-links.ts';
import { type ActiveOperator, activeOperator, pkce } from './helpers/operators.ts';
import { startOperatorSite, type OperatorSite } from './helpers/stand-ins/operator-site.ts';

const PAGE = 'docs/operators/quickstart.md';
const EXAMPLE_DIR = 'examples/operator';
const EXAMPLE = { op: 'op_k5qhq3v4xbn2yqpmg2xq7tcl5e', cn: 'cn_b3ntdq6xq4m7r2kq2wq5yfj3ue', ag: 'ag_q2v7x4mbn3kd5tyr6wz2hcpl4e' };
const DOC_URI = 'https://acme.example/callback';

const text = readFileSync(join(REPO_ROOT, PAGE), 'utf8');
const { blocks, block } = markedBlocks(PAGE);
const quoted = [...text.matchAll(/<!-- from (examples\/operator\/[\w.-]+) -->\n```ts\n([\s\S]*?)```/g)].map((m) => ({ file: m[1] ?? '', code: m[2] ?? '' }));
const sortedKeys = (o: object): string[] => Object.keys(o).sort();

/** A documented curl: method, path (with query), how it authenticates, and its JSON body. */
type Curl = { method: 'GET' | 'POST' | 'DELETE'; path: string; bearer: string | undefined; basic: boolean; body: string | undefined };
function curl(name: string): Curl {
  const b = block('run', name);
  const m = /curl -s (?:-X (POST|DELETE) )?https:\/\/mandate\.example(\/\S+)/.exec(b);
  assert.ok(m?.[2], `${name}: a curl to https://mandate.example`);
  const bearer = /Authorization: Bearer \$(\w+)/.exec(b)?.[1];
  const basic = /-u "\$OPERATOR_ID:\$OPERATOR_SECRET"/.test(b);
  assert.ok(bearer !== undefined || basic, `${name}: sends a session token or the operator's Basic credentials`);
  return { method: (m[1] ?? 'GET') as Curl['method'], path: m[2], bearer, basic, body: /-d '([^']+)'/.exec(b)?.[1] };
}

/** The same keys, recursively, with values of the same JSON type. */
function sameShape(actual: unknown, shown: unknown, at = '$'): void {
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  assert.equal(kind(actual), kind(shown), `${at}: ${JSON.stringify(actual)} vs ${JSON.stringify(shown)}`);
  if (kind(shown) === 'array') for (const [i, s] of (shown as unknown[]).entries()) sameShape((actual as unknown[])[i], s, `${at}[${i}]`);
  if (kind(shown) === 'object') {
    const a = actual as Record<string, unknown>;
    const s = shown as Record<string, unknown>;
    assert.deepEqual(sortedKeys(a), sortedKeys(s), at);
    for (const k of Object.keys(s)) sameShape(a[k], s[k], `${at}.${k}`);
  }
}

describe(PAGE, () => {
  it('every fenced block is marked: a run or answer marker, or quoted from a file of examples/operator', () => {
    const unmarked = blocks.filter((b) => b.marker === '');
    assert.equal(unmarked.length, quoted.length, 'the unmarked blocks are exactly the quoted ones');
    for (const b of unmarked) assert.ok(quoted.some((q) => q.code === b.text), `not quoted from a file: ${b.text.slice(0, 80)}`);
    assert.deepEqual([...new Set(blocks.map((b) => b.marker))].sort(), ['', 'answer', 'run']);
  });

  it('the quoted blocks are in the example files as they stand; the page names every file of the example', () => {
    for (const q of quoted) assert.ok(readFileSync(join(REPO_ROOT, q.file), 'utf8').includes(q.code), `${PAGE}: a block differs from ${q.file}:\n${q.code}`);
    const files = readdirSync(join(REPO_ROOT, EXAMPLE_DIR)).filter((f) => f.endsWith('.ts'));
    for (const f of files) assert.match(text, new RegExp(`\`${f.replace('.', '\\.')}\``), `${PAGE} names ${f}`);
    assert.deepEqual([...new Set(quoted.map((q) => q.file))].sort(), ['agents.ts', 'connect-flow.ts', 'operator-api.ts', 'server.ts'].map((f) => `${EXAMPLE_DIR}/${f}`));
  });

  it('the start command sets settings config.ts reads and runs server.ts; the CLI commands shown are cli.ts\'s', () => {
    const config = readFileSync(join(REPO_ROOT, EXAMPLE_DIR, 'config.ts'), 'utf8');
    const start = block('run', 'start');
    const settings = [...start.matchAll(/^([A-Z_]+)=/gm)].map((m) => m[1] ?? '');
    assert.ok(settings.length >= 5, start);
    for (const s of settings) assert.match(config, new RegExp(`env\\.${s}\\b`), `config.ts reads ${s}`);
    assert.match(start, /node --import tsx examples\/operator\/server\.ts\s*$/);
    assert.match(start, new RegExp(`OPERATOR_ID=${EXAMPLE.op}`));
    for (const setting of ['MANDATE_ISSUER', 'PORT', 'HOST', 'DATA_DIR']) assert.match(text, new RegExp(`\`${setting}\``), `the page tells of ${setting}`);

    const cli = readFileSync(join(REPO_ROOT, EXAMPLE_DIR, 'cli.ts'), 'utf8');
    const usage = [...cli.matchAll(/^\/\/ {3}node --import tsx examples\/operator\/cli\.ts (\S+)/gm)].map((m) => m[1]);
    const named = [...text.matchAll(/cli\.ts ([a-z-]+)/g)].map((m) => m[1]);
    assert.ok(named.length >= 5);
    for (const c of named) assert.ok(usage.includes(c), `cli.ts has the command ${c} (it has ${usage.join(', ')})`);
    assert.match(block('run', 'create-agent'), new RegExp(`^node --import tsx examples/operator/cli\\.ts create-agent ${EXAMPLE.cn} Shopper\\n$`));
    // The CLI prints what Mandate answered, and where the key went.
    const shown = JSON.parse(block('answer', 'create-agent')) as Record<string, unknown>;
    assert.deepEqual(sortedKeys(shown), [...sortedKeys(JSON.parse(block('answer', 'agents-create')) as object), 'dir'].sort());
    assert.match(String(shown.dir), new RegExp(`/\\.mandate-operator/agents/${EXAMPLE.ag}$`));
  });

  describe('the curls, sent to a service', () => {
    let t: TestApp;
    let site: OperatorSite;
    let op: ActiveOperator;
    let person: Owner;
    const sessions: Record<string, Record<string, string>> = {};
    before(async () => {
      site = await startOperatorSite();
      t = await testApp({ env: { OUTBOUND_ALLOW_LOOPBACK: 'true', ADMIN_EMAILS: 'admin@example.com' } });
      sessions.SESSION_TOKEN = (await signUp(t.app)).auth;
      const admin = await signUp(t.app, 'admin@example.com');
      await verifyEmail(t, admin);
      sessions.ADMIN_SESSION_TOKEN = admin.auth;
      op = await activeOperator(t, { name: 'Acme agents', redirectUris: [DOC_URI] });
      person = await ownerWithPasskey(t);
    });
    after(async () => {
      await t.close();
      await site.close();
    });

    /** The curl as written, example ids replaced; a body given replaces the documented one. */
    const send = (name: string, ids: Partial<typeof EXAMPLE>, body?: string) => {
      const c = curl(name);
      let path = c.path;
      for (const [k, v] of Object.entries(ids)) path = path.replaceAll(EXAMPLE[k as keyof typeof EXAMPLE], v);
      const auth = c.basic ? op.auth : sessions[c.bearer ?? ''];
      assert.ok(auth, `${name}: $${c.bearer} is a documented token`);
      const payload = body ?? c.body;
      return t.app.inject({ method: c.method, url: path, headers: { ...auth, ...(payload ? { 'content-type': 'application/json' } : {}) }, ...(payload ? { payload } : {}) });
    };

    /** The person approves the operator with the passkey; the operator exchanges the code: the connection id. */
    async function connection(): Promise<string> {
      const { verifier, challenge } = pkce();
      const start = await t.app.inject({ method: 'POST', url: '/api/connect/start', headers: person.auth, payload: { operator: op.id, redirect_uri: DOC_URI, state: 's', code_challenge: challenge, code_challenge_method: 'S256' } });
      expectStatus(start, 200);
      const s = json<{ consent_id: string; options: { challenge: string } }>(start);
      const finish = await t.app.inject({ method: 'POST', url: '/api/connect/finish', headers: person.auth, payload: { consent_id: s.consent_id, assertion: person.authenticator.assert(s.options) } });
      expectStatus(finish, 200);
      const code = new URL(json<{ redirect: string }>(finish).redirect).searchParams.get('code');
      const token = await t.app.inject({ method: 'POST', url: '/api/v1/operator/token', headers: op.auth, payload: { code, code_verifier: verifier, redirect_uri: DOC_URI } });
      expectStatus(token, 200);
      return json<{ connection_id: string }>(token).connection_id;
    }

    it('register, verify and the admin switch, as written', async () => {
      const registered = await send('register', {});
      expectStatus(registered, 200);
      const answer = json<{ id: string; status: string; redirect_uris: string[]; secret: string; verification: { line: string } }>(registered);
      assert.deepEqual([answer.status, answer.redirect_uris], ['pending', [DOC_URI]]);
      assert.match(answer.secret, /^[A-Za-z0-9_-]{43}$/);
      // The start command serves a line of the documented form for the documented operator.
      const line = /VERIFICATION_LINE='([^']+)'/.exec(block('run', 'start'))?.[1] ?? '';
      assert.match(line, new RegExp(`^mandate-operator=${EXAMPLE.op}:[A-Za-z0-9_-]{24}$`));
      assert.match(answer.verification.line, /^mandate-operator=op_[a-z2-7]{26}:[A-Za-z0-9_-]{24}$/);

      // Verify and switch on an operator whose file is on loopback (the documented one is on acme.example).
      const local = await t.app.inject({ method: 'POST', url: '/api/operators', headers: sessions.SESSION_TOKEN, payload: { name: 'Local', redirect_uris: [`${site.origin}/callback`], browser: 'operator' } });
      expectStatus(local, 200);
      const l = json<{ id: string; verification: { line: string } }>(local);
      site.serve({ status: 200, body: `${l.verification.line}\n` });
      const verified = await send('verify', { op: l.id });
      expectStatus(verified, 200);
      assert.equal(json<{ verified: boolean }>(verified).verified, true);
      const switched = await send('admin-switch', { op: l.id });
      expectStatus(switched, 200);
      assert.equal(json<{ status: string }>(switched).status, 'active');
    });

    it('the operator API: create, list, remove, end, as written; the answers have the shapes shown', async () => {
      const cn = await connection();
      const documented = JSON.parse(curl('agents-create').body ?? '') as { connection_id: string; name: string; jwk: object };
      assert.deepEqual([documented.connection_id, sortedKeys(documented.jwk)], [EXAMPLE.cn, ['crv', 'kty', 'x', 'y']]);
      const { publicJwk } = await generateAgentKeyPair();
      const created = await send('agents-create', {}, JSON.stringify({ ...documented, connection_id: cn, jwk: publicJwk }));
      expectStatus(created, 200);
      const agent = json<{ agent_id: string; name: string; browser: string }>(created);
      const shownAgent = JSON.parse(block('answer', 'agents-create')) as typeof agent;
      sameShape(agent, shownAgent);
      assert.equal(agent.name, shownAgent.name, 'the name with the operator\'s');
      assert.equal(agent.browser, shownAgent.browser);
      for (const id of [agent.agent_id, shownAgent.agent_id]) assert.match(id, /^ag_[a-z2-7]{26}$/);

      const agents = await send('agents-list', { cn });
      expectStatus(agents, 200);
      sameShape(json(agents), JSON.parse(block('answer', 'agents-list')));
      assert.deepEqual(json<{ agent_id: string; status: string }[]>(agents).map((a) => [a.agent_id, a.status]), [[agent.agent_id, 'active']]);

      const connections = await send('connections-list', {});
      expectStatus(connections, 200);
      const shownConnections = JSON.parse(block('answer', 'connections-list')) as { sub: string; max_agents: number; agents: number }[];
      sameShape(json(connections), shownConnections);
      assert.deepEqual(json<{ connection_id: string; max_agents: number; agents: number }[]>(connections).map((c) => [c.connection_id, c.max_agents, c.agents]), [[cn, 5, 1]]);
      assert.match(shownConnections[0]?.sub ?? '', /^[A-Za-z0-9_-]{43}$/);

      expectStatus(await send('agents-remove', { ag: agent.agent_id }), 200);
      const removed = json<{ agent_id: string; status: string }[]>(await send('agents-list', { cn }));
      assert.notEqual(removed.find((a) => a.agent_id === agent.agent_id)?.status, 'active');

      expectStatus(await send('connections-end', { cn }), 200);
      const ended = json<{ connection_id: string; status: string }[]>(await send('connections-list', {}));
      assert.notEqual(ended.find((c) => c.connection_id === cn)?.status, 'active');
      const again = await send('agents-create', {}, JSON.stringify({ ...documented, connection_id: cn, jwk: (await generateAgentKeyPair()).publicJwk }));
      expectStatus(again, 403);
    });
  });
});
