import assert from 'node:assert/strict';
import { existsSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { REPO_ROOT } from '../../packages/server/test/helpers/child-process.ts';
import { HttpOwner, type PendingRequest } from '../../packages/server/test/helpers/over-http.ts';
import { freePort, startServer, type ServerProcess } from '../../packages/server/test/helpers/server-process.ts';
import { PackagedProject, type Program, type Ran, readmeExamples, showRan } from './helpers/packaged-project.ts';

// The SDKs as someone outside this repository gets them: `npm pack` tarballs of @mandate/protocol,
// @mandate/site and @mandate/agent installed with npm into a fresh `{"type":"module"}` project in the
// temp folder, beside express from the registry. Everything there runs with plain `node` (no tsx, no
// TypeScript, no NODE_OPTIONS) against a real Mandate server (the built one): the Express site of
// @mandate/site's README in cloud and in local mode, the `mandate-agent` CLI through `npx`, the SDK
// example of @mandate/agent's README, and an agent of the original system that sends its step-up in
// X-AuthYourAgent-Stepup. The README examples are read from the installed packages, so the code npm
// shows is the code that runs. Last, a TypeScript file typechecks against the shipped .d.ts files.
// The tests build on each other in order.

const SITE = 'packaged-shop.example';
const SDKS = ['@mandate/protocol', '@mandate/site', '@mandate/agent'];

type Site = { mode: 'cloud' | 'local'; url: string; program: Program };

/** An agent of the original system: it collects a step-up with the installed SDK and sends it in X-AuthYourAgent-Stepup. */
const LEGACY_AGENT = `import { MandateAgent } from '@mandate/agent';

// argv: the site id, the action, the URL to use the step-up at, the URL of the other site.
const [site, action, url, otherUrl] = process.argv.slice(2);
const siteOrigins = [new URL(url).origin, new URL(otherUrl).origin];
const sent = []; // the headers of every request to a site, as the SDK sent them
const agent = MandateAgent.fromDirectory(undefined, {
  fetch: (input, init) => {
    if (siteOrigins.includes(new URL(String(input)).origin)) {
      const h = new Headers(init?.headers);
      sent.push({ legacy: h.get('x-authyouragent-stepup'), ours: h.get('x-service-stepup'), signed: h.has('authorization') && h.has('dpop') });
    }
    return fetch(input, init);
  },
});

const token = await agent.stepup(site, action, { intervalMs: 200 });
// The SDK's request signing (pass + fresh DPoP proof); stepup: false so it never asks for a step-up itself.
const post = async (to, headers) => {
  const res = await agent.fetch(to, { method: 'POST', headers }, { site, stepup: false });
  return { status: res.status, body: await res.json() };
};
const legacy = { 'X-AuthYourAgent-Stepup': token };
const first = await post(url, legacy);
const again = await post(url, legacy);
const elsewhere = await post(otherUrl, legacy);
const none = await post(url, {});
console.log(JSON.stringify({ token, first, again, elsewhere, none, sent }));
`;

/** A TypeScript user of the three packages: it must typecheck against what they ship, and its wrong uses must not. */
const TYPESCRIPT_CONSUMER = `import type { Request, Response } from 'express';
import { createVerifier, type Verifier, type VerifyResult } from '@mandate/site';
import { requireAgent } from '@mandate/site/express';
import { AccessRequiredError, MandateAgent, type Pass } from '@mandate/agent';
import { createDpopProof, generateAgentKeyPair, verifyPassAndProof } from '@mandate/protocol';

const mandate: Verifier = createVerifier({ mode: 'local', serviceUrl: 'https://mandate.example', site: 'shop.example', revTtlSec: 60 });
export const guard = requireAgent(mandate, { scope: 'pay', action: (req: Request) => \`pay order \${String(req.params['id'])}\` });
export function handler(req: Request, res: Response): void {
  const agent: string | undefined = req.mandate?.agentId; // the Express Request augmentation ships too
  res.json({ agent });
}
export async function check(): Promise<string> {
  const result: VerifyResult = await mandate.verify({ method: 'GET', url: '/orders', headers: {} }, { scope: 'orders:read' });
  return result.ok ? result.userId : result.error;
}
export async function passOf(dir: string): Promise<string> {
  try {
    const pass: Pass = await MandateAgent.fromDirectory(dir).pass('shop.example');
    return pass.accessToken;
  } catch (e) {
    if (e instanceof AccessRequiredError) return e.site;
    throw e;
  }
}
export async function proof(): Promise<string> {
  const { privateKey, publicJwk } = await generateAgentKeyPair();
  return createDpopProof(privateKey, publicJwk, { htm: 'GET', htu: 'https://shop.example/orders', accessToken: 'pass' });
}
export const verify: typeof verifyPassAndProof = verifyPassAndProof;

// The types are real, not any: each wrong use below must be an error.
// @ts-expect-error not a mode
createVerifier({ mode: 'hybrid', serviceUrl: 'https://mandate.example', site: 'shop.example' });
// @ts-expect-error a pass never carries the refresh token
export const leak = (p: Pass): string => p.refreshToken;
`;

function json(r: Ran): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(r.stdout);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const isInside = (dir: string, path: string): boolean => !relative(dir, path).startsWith(`..${sep}`) && relative(dir, path) !== '..';

describe('the SDKs packed and installed into a plain JavaScript project', () => {
  let server: ServerProcess;
  let project: PackagedProject;
  let owner: HttpOwner;
  let cloud: Site;
  let local: Site;
  let agentDir: string;
  let agentId = '';
  const sites: Site[] = [];

  /** `npx mandate-agent <args> --json` in the project, as the agent of `agentDir`. */
  const cli = (...args: string[]) => project.npx(['mandate-agent', ...args, '--json'], { MANDATE_AGENT_DIR: agentDir });
  const logs = () => [`--- mandate\n${server.logs()}`, ...sites.map((s) => `--- ${s.program.name} (${s.url})\n${s.program.output()}`)].join('\n');

  async function startSite(mode: Site['mode'], file: string): Promise<Site> {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = { MANDATE_URL: server.url, MANDATE_ISSUER: server.baseUrl, SITE_ID: SITE, PUBLIC_BASE_URL: url, PORT: String(port) };
    const site: Site = { mode, url, program: project.start(`${mode} site (${file})`, file, env) };
    sites.push(site);
    await site.program.waitFor('shop listening');
    return site;
  }

  /**
   * The owner approves the agent's next request of this kind while `running` waits for the answer.
   * A program that ends before asking fails the test at once, not after the owner's 30 s of waiting.
   */
  async function approveWhile(running: Promise<Ran>, kind: 'initial' | 'stepup'): Promise<{ asked: PendingRequest; ran: Ran }> {
    let seen = false;
    const answering = owner.nextPending(agentId, kind).then(async (p) => {
      seen = true;
      await owner.approve(p.id);
      return p;
    });
    const endedFirst = running.then((r) => {
      if (!seen) throw new Error(`ended before the owner saw its ${kind} request: ${showRan(r)}\n${logs()}`);
      return answering;
    });
    const asked = await Promise.race([answering, endedFirst]);
    return { asked, ran: await running };
  }

  /** `request --wait` while the owner approves on the "phone". */
  async function grantAccess(scopes: string): Promise<void> {
    const { ran: r } = await approveWhile(cli('request', '--site', SITE, '--scopes', scopes, '--wait', '--interval', '0.2', '--timeout', '60'), 'initial');
    assert.equal(r.code, 0, showRan(r));
    assert.deepEqual([json(r)?.['status'], json(r)?.['scopes']], ['approved', scopes.split(',')], showRan(r));
  }

  before(async () => {
    server = await startServer({ name: 'mandate' });
    project = await PackagedProject.create(['express@^5']);
    owner = await HttpOwner.signUp(server, server.baseUrl, { label: 'packaged' });
    agentDir = project.tempDir('agent-');
    // The site of @mandate/site's README, exactly as the installed package shows it.
    const examples = readmeExamples(join(project.dir, 'node_modules/@mandate/site/README.md'));
    assert.deepEqual([...examples.keys()], ['server.mjs', 'server-local.mjs'], 'the README examples the test runs');
    for (const [file, code] of examples) project.write(file, code);
    cloud = await startSite('cloud', 'server.mjs');
    local = await startSite('local', 'server-local.mjs');
  });

  after(async () => {
    for (const s of sites) await s.program.stop();
    await server?.stop();
    project?.remove();
  });

  it('the project holds the three packages from their tarballs, and no tsx or TypeScript', () => {
    const require = createRequire(join(project.dir, 'package.json'));
    for (const name of SDKS) {
      const installed = realpathSync(join(project.dir, 'node_modules', name));
      assert.ok(isInside(project.dir, installed), `${name} is a copy in the project, not a link to ${installed}`);
      assert.equal(project.installedManifest(name).version, '0.1.0');
      assert.ok(project.tarballs.some((t) => t.endsWith(`${name.slice(1).replace('/', '-')}-0.1.0.tgz`)), `${name} was packed`);
      const entry = require.resolve(name);
      assert.ok(entry.startsWith(join(project.dir, 'node_modules', name, 'dist') + sep) && entry.endsWith('.js'), `${name} resolves to its built JavaScript: ${entry}`);
    }
    for (const tool of ['tsx', 'typescript']) {
      assert.throws(() => require.resolve(tool), { code: 'MODULE_NOT_FOUND' }, `${tool} must not be reachable from the project`);
    }
    for (const bin of ['tsx', 'tsc']) assert.equal(existsSync(join(project.dir, 'node_modules/.bin', bin)), false, `no ${bin} in node_modules/.bin`);
    assert.ok(existsSync(join(project.dir, 'node_modules/.bin/mandate-agent')), 'the CLI is installed as a bin');
  });

  it('npx mandate-agent pairs a new key with a one-time code from the owner', async () => {
    const { code } = await owner.ok<{ code: string }>('POST', '/api/agents/pairing-codes', { name: 'Packaged agent' });
    const paired = await cli('pair', code, '--service', server.url);
    assert.equal(paired.code, 0, showRan(paired));
    agentId = String(json(paired)?.['agent_id']);
    assert.match(agentId, /^ag_/, showRan(paired));
    assert.equal(json(paired)?.['name'], 'Packaged agent');

    const me = await cli('whoami');
    assert.equal(me.code, 0, showRan(me));
    assert.equal(json(me)?.['agent_id'], agentId);
  });

  it('access through the CLI: request --wait while the owner approves, then call answers 200 at the cloud and the local site; a scope not granted is refused with 403 insufficient_scope', async () => {
    assert.match(agentId, /^ag_/, 'the agent the test before paired');
    await grantAccess('orders:read');
    for (const site of [cloud, local]) {
      const r = await cli('call', '--site', SITE, `${site.url}/orders`);
      assert.equal(r.code, 0, `${site.mode}: ${showRan(r)}\n${logs()}`);
      assert.deepEqual(json(r)?.['status'], 200);
      assert.deepEqual(json(r)?.['body'], { orders: [], person: owner.id, agent: agentId }, `${site.mode}: the site names the verified agent and person`);

      const refused = await cli('call', '--site', SITE, '-X', 'POST', '--no-stepup', `${site.url}/orders/42/pay`);
      assert.equal(refused.code, 1, showRan(refused));
      assert.equal(json(refused)?.['status'], 403, showRan(refused));
      assert.equal((json(refused)?.['body'] as { error?: string } | undefined)?.error, 'insufficient_scope', showRan(refused));
    }
    assert.deepEqual((await owner.pending()).filter((p) => p.agent_id === agentId), [], 'the owner is never asked to approve a step-up the pass cannot use');
  });

  it("@mandate/agent's README example: with scope pay granted, it reads orders and pays order 42 with a step-up the SDK asks the owner for, at both sites", async () => {
    assert.match(agentId, /^ag_/, 'the agent the tests before paired');
    // The owner takes back the read-only access and approves the wider one.
    const grant = (await owner.grants()).find((g) => g.agent_id === agentId && g.site === SITE);
    assert.ok(grant, 'a live grant');
    await owner.ok('POST', `/api/grants/${grant.id}/revoke`);
    await grantAccess('orders:read,pay');

    const example = readmeExamples(join(project.dir, 'node_modules/@mandate/agent/README.md'));
    assert.deepEqual([...example.keys()], ['agent.mjs'], 'the README example the test runs');
    project.write('agent.mjs', example.get('agent.mjs') ?? '');
    for (const site of [cloud, local]) {
      const { asked, ran: r } = await approveWhile(project.node('agent.mjs', [], { MANDATE_AGENT_DIR: agentDir, SHOP_URL: site.url, SITE_ID: SITE }), 'stepup');
      assert.equal(asked.action, 'pay order 42', 'the owner approves the action the site named');
      assert.equal(r.code, 0, `${site.mode}: ${showRan(r)}\n${logs()}`);
      assert.deepEqual(r.stdout.trim().split('\n'), [
        `200 ${JSON.stringify({ orders: [], person: owner.id, agent: agentId })}`,
        `200 ${JSON.stringify({ paid: '42', agent: agentId, stepup: true })}`,
      ], `${site.mode}: ${showRan(r)}`);
    }
  });

  it('a step-up in X-AuthYourAgent-Stepup (never X-Service-Stepup), with a fresh pass and proof from the SDK: 200 at the cloud and the local site; the same token again, there or at the other site: refused; no step-up header: 403 stepup_required', async () => {
    assert.match(agentId, /^ag_/, 'the agent the tests before paired');
    project.write('legacy-agent.mjs', LEGACY_AGENT);
    for (const [site, other, order] of [[cloud, local, '7'], [local, cloud, '8']] as const) {
      const action = `pay order ${order}`;
      const running = project.node('legacy-agent.mjs', [SITE, action, `${site.url}/orders/${order}/pay`, `${other.url}/orders/${order}/pay`], { MANDATE_AGENT_DIR: agentDir });
      const { asked, ran: r } = await approveWhile(running, 'stepup');
      assert.equal(asked.action, action);
      assert.equal(r.code, 0, `${site.mode}: ${showRan(r)}\n${logs()}`);
      const out = json(r) as { token: string; sent: unknown[]; [k: string]: unknown } | undefined;
      assert.ok(out && typeof out.token === 'string' && out.token.length > 0, showRan(r));
      const outcome = (k: string) => {
        const a = out[k] as { status: number; body: Record<string, unknown> };
        return [a.status, a.body['error'] ?? a.body];
      };
      assert.deepEqual(outcome('first'), [200, { paid: order, agent: agentId, stepup: true }], `${site.mode}: ${showRan(r)}\n${logs()}`);
      assert.deepEqual(outcome('again'), [401, 'stepup_used_or_expired'], `${site.mode}: single use`);
      assert.deepEqual(outcome('elsewhere'), [401, 'stepup_used_or_expired'], `${other.mode}: used up at the ${site.mode} site`);
      assert.deepEqual(outcome('none'), [403, 'stepup_required'], `${site.mode}: no step-up header`);
      assert.equal((out['none'] as { body: Record<string, unknown> }).body['action'], action);
      const legacy = { legacy: out.token, ours: null, signed: true };
      assert.deepEqual(out.sent, [legacy, legacy, legacy, { legacy: null, ours: null, signed: true }], 'what the agent sent: the token only in X-AuthYourAgent-Stepup');
    }
  });

  it('a TypeScript project typechecks against the shipped .d.ts files (skipLibCheck off, nodenext), and its wrong uses are errors', async () => {
    // Types only: the repository's tsc and @types (node, express), linked into the folder above the
    // project, as a TypeScript user would install them. Nothing runs here, and it comes last.
    const typesDir = join(dirname(project.dir), 'node_modules');
    mkdirSync(typesDir, { recursive: true });
    symlinkSync(join(REPO_ROOT, 'node_modules/@types'), join(typesDir, '@types'), 'dir');
    project.write('typecheck/consumer.ts', TYPESCRIPT_CONSUMER);
    project.write('typecheck/tsconfig.json', JSON.stringify({
      compilerOptions: { target: 'ES2023', lib: ['ES2023'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noEmit: true, types: ['node'] },
      files: ['consumer.ts'],
    }));
    const tsc = await project.run(join(REPO_ROOT, 'node_modules/.bin/tsc'), ['-p', join(project.dir, 'typecheck'), '--pretty', 'false']);
    assert.equal(tsc.code, 0, showRan(tsc));
  });
});
