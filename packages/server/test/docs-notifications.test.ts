/**
 * The push docs cannot rot: docs/reference/notifications.md and docs/operations/push.md are checked
 * against the code. Every JSON, shell and SQL block of those pages is marked with a comment
 * (`<!-- payload: NAME -->`, `<!-- fcm: NAME -->`, `<!-- assetlinks: PACKAGE -->`, `<!-- run: NAME -->`,
 * `<!-- sql: NAME -->`) and produced or run here; an unmarked block fails. And every setting the
 * service reads (src/config/keys.ts) must be in README.md's table, .env.example and docs/operations/.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { detailsDigestOf } from '@mandate/protocol';
import { loadEnv, parseConfig } from '../src/config/config.ts';
import { CONFIG_KEYS } from '../src/config/keys.ts';
import { FixedClock } from '../src/clock.ts';
import { agentAddedMessage, approvalMessage, dismissPayload, noteMessage, pushPayload, securityMessage, TEST_MESSAGE } from '../src/domain/notifications/messages.ts';
import { Notifier } from '../src/domain/notifications/notifier.ts';
import { inQuietHours } from '../src/domain/notifications/settings.ts';
import { fcmTransport, parseServiceAccount } from '../src/delivery/fcm.ts';
import { OutboxWorker, type Transports } from '../src/delivery/outbox-worker.ts';
import type { PushOptions, PushPayload, PushTransport, WebPushTarget } from '../src/delivery/push-port.ts';
import { isValidVapidKeyPair } from '../src/delivery/web-push.ts';
import { openPostgresStore } from '../src/store/postgres/open.ts';
import { openSqliteStore } from '../src/store/sqlite/open.ts';
import type { PushDeviceRecord, Store } from '../src/store/ports/index.ts';
import { REPO_ROOT } from './helpers/child-process.ts';
import { testApp } from './helpers/app.ts';
import { freshPostgresDatabase } from './helpers/postgres.ts';

const REFERENCE = 'docs/reference/notifications.md';
const OPERATIONS = 'docs/operations/push.md';
const read = (path: string): string => readFileSync(join(REPO_ROOT, path), 'utf8');

interface Block {
  marker: string;
  name: string;
  lang: string;
  text: string;
}

/** Every fenced block of a page, with the `<!-- marker: name -->` line before it (marker '' when none). */
function blocks(path: string): Block[] {
  const text = read(path);
  return [...text.matchAll(/(?:<!-- ([a-z]+): ([\w.-]+) -->\n)?```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ marker: m[1] ?? '', name: m[2] ?? '', lang: m[3] ?? '', text: m[4] ?? '' }));
}

const marked = (path: string, marker: string): Map<string, Block> => new Map(blocks(path).filter((b) => b.marker === marker).map((b) => [b.name, b]));

/** The ids and times the reference's examples use. */
const N = 'n_5w3kq2h7c4yzm6rtb2xv4dpa3e';
const T = 't_q7m2xk4c6h3vz5rb2ta6yd4wne';
const EXPIRES = Date.UTC(2026, 0, 15, 9, 5, 0);
const AGENT = 'Shopping helper';
const ACCESS = { txnId: T, kind: 'access', agentName: AGENT, site: 'shop.example', scopes: ['orders:read', 'cart:write'], userInfo: ['user:name', 'user:email'], expiresAt: EXPIRES };
const STEPUP = { txnId: T, kind: 'stepup', agentName: AGENT, site: 'shop.example', action: 'Pay 42.00 EUR for order 1234', expiresAt: EXPIRES };
/** A connected app's tool call (decisions §28): a site step-up of an agent of kind `app`. */
const APP_ARGS = { path: '/reports/2026-q4.pdf', to: 'accountant@example.com' };
const APP_CALL = {
  txnId: T, kind: 'stepup', filedBy: 'site' as const, agentName: 'Assistant', site: 'https://tools.example/mcp', action: 'send_file', expiresAt: EXPIRES,
  app: { clientHost: 'assistant.example', resource: 'https://tools.example/mcp' },
  details: { summary: 'path: /reports/2026-q4.pdf\nto: accountant@example.com', digest: detailsDigestOf(APP_ARGS) },
};
const NOTE = { title: 'Order placed', text: 'Order 1234 arrives on Friday.' };

/** What app.ts passes to the notifier, read from its source so that the examples follow it. */
function appWording(): { addedBy: string; passkeyTitle: string; passkeyBody: (name: string) => string } {
  const app = readFileSync(new URL('../src/app.ts', import.meta.url), 'utf8');
  // The owner's own agents say how by Agents.create's default; an operator's name the operator.
  const agents = readFileSync(new URL('../src/domain/agents/agents.ts', import.meta.url), 'utf8');
  const passesHow = /notifier\.agentAdded\(agent\.userId, agent\.name, how\)/.test(app);
  const added = passesHow ? /context: CreationContext = \{ how: '([^']+)' \}/.exec(agents) : null;
  const security = /notifier\.security\(p\.userId, '([^']+)', `([^`]+)`\)/.exec(app);
  assert.ok(added && security, 'app.ts no longer calls the notifier as the reference documents: update docs/reference/notifications.md and this test');
  const body = security[2] ?? '';
  return { addedBy: added[1] ?? '', passkeyTitle: security[1] ?? '', passkeyBody: (name) => body.replace('${p.name}', name) };
}

/** A push transport that accepts everything and remembers what it was given. */
function recorder(): PushTransport<WebPushTarget> & { sent: { payload: PushPayload; options: PushOptions }[] } {
  const sent: { payload: PushPayload; options: PushOptions }[] = [];
  return {
    sent,
    async send(_target, payload, options) {
      sent.push({ payload, options });
      return { outcome: 'sent' };
    },
  };
}

const device = (id: string, userId: string, kind: 'webpush' | 'fcm', address: string): PushDeviceRecord => ({
  id, userId, kind, address, p256dh: kind === 'webpush' ? 'BPk' : null, auth: kind === 'webpush' ? 'au' : null, name: id, createdAt: 0, lastUsedAt: null, failures: 0, dampedUntil: null,
});

describe(`${REFERENCE}`, () => {
  let dir: string;
  let store: Store;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mandate-docs-push-'));
    store = await openSqliteStore(dir);
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has no JSON example the tests do not produce', () => {
    const unmarked = blocks(REFERENCE).filter((b) => b.marker === '' && b.lang !== '');
    assert.deepEqual(unmarked.map((b) => b.text.slice(0, 60)), []);
  });

  it('every payload example is exactly what messages.ts builds', () => {
    const wording = appWording();
    const expected: Record<string, PushPayload> = {
      'approval-access': pushPayload(N, approvalMessage(ACCESS), false),
      'approval-stepup-quiet': pushPayload(N, approvalMessage(STEPUP), true),
      'approval-stepup-details': pushPayload(N, approvalMessage({ ...STEPUP, details: { summary: 'Pay 42.00 EUR to shop.example\nOrder 1234: 2 items', digest: 'p4S9sS3L3hZ0hJ0tqv3Z8bYQy2a4rM7pN1eW6kD5cXg' } }), false),
      'approval-site-stepup': pushPayload(N, approvalMessage({ ...STEPUP, filedBy: 'site' }), false),
      'approval-app-call': pushPayload(N, approvalMessage(APP_CALL), false),
      dismiss: dismissPayload(N, T),
      note: pushPayload(N, noteMessage(AGENT, NOTE), false),
      'note-untitled': pushPayload(N, noteMessage(AGENT, { title: '', text: NOTE.text }), false),
      'security-passkey': pushPayload(N, securityMessage(wording.passkeyTitle, wording.passkeyBody('Pixel 8')), false),
      'agent-added': pushPayload(N, agentAddedMessage(AGENT, wording.addedBy), false),
      test: pushPayload(N, TEST_MESSAGE, false),
    };
    const documented = marked(REFERENCE, 'payload');
    assert.deepEqual([...documented.keys()].sort(), Object.keys(expected).sort(), 'the marked payload examples');
    for (const [name, block] of documented) {
      assert.equal(block.lang, 'json', name);
      assert.deepEqual(JSON.parse(block.text), JSON.parse(JSON.stringify(expected[name])), `payload example ${name}`);
    }
  });

  it('the FCM data message is what the FCM transport sends for that approval, from the event on', async () => {
    const clock = new FixedClock(EXPIRES - 300_000);
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const serviceAccount = parseServiceAccount(JSON.stringify({
      type: 'service_account', client_email: 'push@mandate-test.iam.gserviceaccount.com', private_key_id: 'k1',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    }));
    const bodies: unknown[] = [];
    const fakeFetch = (async (input: string | URL | Request, init?: RequestInit) => {
      if (String(input) === 'https://oauth.test/token') return new Response(JSON.stringify({ access_token: 'ya29.test', expires_in: 3600 }), { status: 200 });
      assert.equal(String(input), 'https://fcm.test/v1/projects/mandate-test/messages:send');
      bodies.push(JSON.parse(String(init?.body)));
      return new Response('{"name":"projects/mandate-test/messages/1"}', { status: 200 });
    }) as typeof fetch;
    const fcm = fcmTransport({ projectId: 'mandate-test', serviceAccount, apiBase: 'https://fcm.test', tokenUrl: 'https://oauth.test/token', clock, fetch: fakeFetch });
    const user = 'u_fcmexample';
    await store.pushDevices.upsert(device('dev_fcmexample', user, 'fcm', 'fcm-registration-token-of-the-device'));
    await new Notifier(store, clock).approvalRequested(user, ACCESS);
    await new OutboxWorker({ store, clock, transports: { webpush: null, fcm }, holder: 'test', pollMs: 1000, claimMs: 60_000 }).drain();

    assert.equal(bodies.length, 1, 'one message now (its dismiss waits for the expiry)');
    const sent = bodies[0] as { message: { data: Record<string, string> } };
    assert.match(sent.message.data.id ?? '', /^n_[a-z2-7]{26}$/);
    sent.message.data.id = N;
    const documented = marked(REFERENCE, 'fcm');
    assert.deepEqual([...documented.keys()], ['approval-access']);
    assert.deepEqual(sent, JSON.parse(documented.get('approval-access')?.text ?? ''));
    for (const value of Object.values(sent.message.data)) assert.equal(typeof value, 'string');
  });

  it('the delivery options table is what the outbox worker sends', async () => {
    const section = /## Delivery options per type\n([\s\S]*?)\n## /.exec(read(REFERENCE))?.[1] ?? '';
    const rows = new Map([...section.matchAll(/^\| `(\w+)`[^|]*\| ([^|]+) \| `(\w+)` \|/gm)].map((m) => [m[1] ?? '', { ttl: (m[2] ?? '').trim(), urgency: m[3] ?? '' }]));
    assert.deepEqual([...rows.keys()].sort(), ['agent_added', 'approval', 'dismiss', 'note', 'takeover', 'test']);

    const clock = new FixedClock(EXPIRES - 300_000);
    const webpush = recorder();
    const transports: Transports = { webpush, fcm: null };
    const worker = new OutboxWorker({ store, clock, transports, holder: 'test', pollMs: 1000, claimMs: 60_000 });
    const notifier = new Notifier(store, clock);
    const user = 'u_optionsexample';
    await store.pushDevices.upsert(device('dev_optionsexample', user, 'webpush', 'https://push.example/s/1'));
    await notifier.approvalRequested(user, ACCESS);
    clock.advance(60_000);
    await notifier.agentNote(user, AGENT, NOTE);
    await notifier.agentAdded(user, AGENT, 'in the app');
    await worker.drain();
    clock.set(EXPIRES);
    await worker.drain();
    await worker.sendTest(user, pushPayload(N, TEST_MESSAGE, false));

    const got = new Map(webpush.sent.map((s) => [s.payload.type, s.options]));
    const approval = got.get('approval');
    assert.deepEqual(approval, { ttlSec: 240, urgency: 'high', topic: T }, 'approval: the seconds left when sent, topic = txn_id');
    assert.match(rows.get('approval')?.ttl ?? '', /seconds left until the request expires/);
    for (const type of ['dismiss', 'note', 'agent_added', 'test'] as const) {
      const options = got.get(type);
      assert.ok(options, `${type} was sent`);
      assert.equal(rows.get(type)?.ttl, `${options.ttlSec} s`, `${type} TTL`);
      assert.equal(rows.get(type)?.urgency, options.urgency, `${type} urgency`);
      assert.equal(options.topic, type === 'dismiss' ? T : undefined, `${type} topic`);
    }
    // No code sends a takeover yet: the table says so.
    assert.match(section, /`takeover` \(not sent yet\)/);
  });

  it('settings and quiet hours decide what is pushed, as documented; the inbox keeps everything', async () => {
    const clock = new FixedClock(Date.UTC(2026, 0, 15, 9, 0, 0));
    const notifier = new Notifier(store, clock);
    const everything = async (user: string) => {
      await store.pushDevices.upsert(device(`dev_${user}`, user, 'webpush', `https://push.example/${user}`));
      await notifier.approvalRequested(user, { ...ACCESS, txnId: `t_${user}`, expiresAt: clock.now() + 300_000 });
      await notifier.agentNote(user, AGENT, NOTE);
      await notifier.agentAdded(user, AGENT, 'in the app');
      await notifier.security(user, 'New passkey added', 'x');
      const queued = await store.outbox.list({ userId: user });
      const inbox = await store.notifications.list(user, { before: 0, limit: 10, since: 0 });
      return {
        // The push type as the device gets it (the outbox kind of a security notice is `security`).
        pushed: queued.map((m) => `${String(m.payload.type)}:${String(m.payload.title)}${m.payload.silent === true ? ':silent' : ''}`).sort(),
        inbox: inbox.map((n) => n.type).sort(),
      };
    };
    const all = ['agent_added', 'approval', 'note', 'security'];
    const put = (userId: string, s: { approvals?: boolean; notes?: boolean; sessionNotices?: boolean; quiet?: boolean }) =>
      store.notifySettings.put({ userId, approvals: s.approvals ?? true, notes: s.notes ?? true, sessionNotices: s.sessionNotices ?? true, quietHours: s.quiet ? { start: '08:00', end: '10:00', tz: 'UTC' } : null, updatedAt: 0 });

    const plain = await everything('u_plain');
    assert.deepEqual(plain.inbox, all);
    assert.deepEqual(plain.pushed, ['agent_added:New agent: Shopping helper', 'approval:Shopping helper asks for access to shop.example', 'dismiss:', 'note:New passkey added', 'note:Shopping helper: Order placed']);

    await put('u_quiet', { quiet: true });
    const quiet = await everything('u_quiet');
    assert.deepEqual(quiet.inbox, all);
    assert.deepEqual(quiet.pushed, ['approval:Shopping helper asks for access to shop.example:silent', 'dismiss:'], 'quiet hours: approvals silent, the rest not pushed');

    await put('u_nonotes', { notes: false });
    assert.deepEqual((await everything('u_nonotes')).pushed, ['agent_added:New agent: Shopping helper', 'approval:Shopping helper asks for access to shop.example', 'dismiss:', 'note:New passkey added']);
    await put('u_nonotices', { sessionNotices: false });
    assert.deepEqual((await everything('u_nonotices')).pushed, ['approval:Shopping helper asks for access to shop.example', 'dismiss:', 'note:Shopping helper: Order placed']);
    await put('u_noapprovals', { approvals: false });
    assert.deepEqual((await everything('u_noapprovals')).pushed, ['agent_added:New agent: Shopping helper', 'note:New passkey added', 'note:Shopping helper: Order placed'], 'no approval, and no dismiss either');

    // The window: start inside, end outside, across midnight.
    const at = (hhmm: string) => Date.parse(`2026-01-15T${hhmm}:00Z`);
    const night = { start: '22:00', end: '07:00', tz: 'UTC' };
    assert.deepEqual(['21:59', '22:00', '03:00', '06:59', '07:00'].map((t) => inQuietHours(night, at(t))), [false, true, true, true, false]);
    assert.equal(inQuietHours({ start: '22:00', end: '07:00', tz: 'Europe/Paris' }, at('21:30')), true, 'judged in the owner\'s time zone');
  });
});

describe(`${OPERATIONS}`, () => {
  it('has no JSON, shell or SQL block the tests do not run', () => {
    const unmarked = blocks(OPERATIONS).filter((b) => b.marker === '');
    assert.deepEqual(unmarked.map((b) => b.text.slice(0, 60)), []);
    const markers = new Set(blocks(OPERATIONS).map((b) => b.marker));
    assert.deepEqual([...markers].sort(), ['assetlinks', 'run', 'sql']);
  });

  it('the VAPID key command makes a pair the configuration accepts', () => {
    const command = marked(OPERATIONS, 'run').get('vapid-keys')?.text.trim() ?? '';
    assert.equal(command, 'npx web-push generate-vapid-keys --json');
    const r = spawnSync('sh', ['-c', command], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, npm_config_update_notifier: 'false' } });
    assert.equal(r.status, 0, r.stderr);
    const keys = JSON.parse(r.stdout) as { publicKey: string; privateKey: string };
    assert.ok(isValidVapidKeyPair(keys.publicKey, keys.privateKey));
    assert.deepEqual(parseConfig({ VAPID_PUBLIC_KEY: keys.publicKey, VAPID_PRIVATE_KEY: keys.privateKey }).vapid, keys);
  });

  it('the assetlinks example is what the service serves', async () => {
    const documented = marked(OPERATIONS, 'assetlinks');
    assert.deepEqual([...documented.keys()], ['com.example.mandate']);
    const expected = JSON.parse(documented.get('com.example.mandate')?.text ?? '') as [{ target: { sha256_cert_fingerprints: string[] } }];
    const fingerprint = expected[0].target.sha256_cert_fingerprints[0] ?? '';
    // Given in lower case, served in upper case, as the page says.
    const t = await testApp({ env: { ANDROID_PACKAGE_NAME: 'com.example.mandate', ANDROID_CERT_SHA256: fingerprint.toLowerCase() } });
    try {
      const res = await t.app.inject({ method: 'GET', url: '/.well-known/assetlinks.json' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['cache-control'], 'public, max-age=3600');
      assert.deepEqual(res.json(), expected);
    } finally {
      await t.close();
    }
  });

  describe('the SQL queries run on both stores, over a real outbox', () => {
    const queries = marked(OPERATIONS, 'sql');

    /** Some sent, failed and waiting messages, through the notifier and the worker. */
    async function fill(store: Store): Promise<void> {
      const clock = new FixedClock(EXPIRES - 300_000);
      const user = 'u_sqlexample';
      await store.pushDevices.upsert(device('dev_sqlweb', user, 'webpush', 'https://push.example/sql'));
      await store.pushDevices.upsert(device('dev_sqlfcm', user, 'fcm', 'fcm-token-that-cannot-be-sent'));
      const notifier = new Notifier(store, clock);
      await notifier.approvalRequested(user, ACCESS);
      await notifier.agentNote(user, AGENT, NOTE);
      await new OutboxWorker({ store, clock, transports: { webpush: recorder(), fcm: null }, holder: 'sql', pollMs: 1000, claimMs: 60_000 }).drain();
      await store.counters.next('sw:push-received');
    }

    it('has its queries', () => {
      assert.deepEqual([...queries.keys()].sort(), ['counters', 'failed', 'failing-devices', 'summary', 'waiting']);
    });

    it('on SQLite', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mandate-docs-sql-'));
      const store = await openSqliteStore(dir);
      try {
        await fill(store);
        const db = new SQLite(join(dir, 'mandate.db'), { readonly: true });
        try {
          const results = Object.fromEntries([...queries].map(([name, q]) => [name, db.prepare(q.text).all()]));
          assert.ok((results.failed ?? []).length > 0, 'the FCM messages failed (no FCM here)');
          assert.ok((results.waiting ?? []).length > 0, 'the dismissals wait for the expiry');
          assert.ok((results.summary ?? []).length > 0);
          assert.deepEqual(results.counters, [{ name: 'sw:push-received', value: 1 }]);
        } finally {
          db.close();
        }
      } finally {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('on PostgreSQL', async () => {
      const database = await freshPostgresDatabase();
      const store = await openPostgresStore(database.url);
      const client = new pg.Client({ connectionString: database.url });
      try {
        await fill(store);
        await client.connect();
        for (const [name, q] of queries) {
          const { rows } = await client.query(q.text);
          assert.ok(rows.length > 0, `${name} answered rows`);
        }
      } finally {
        await client.end().catch(() => {});
        await store.close();
        await database.drop();
      }
    });
  });
});

describe('every setting is documented', () => {
  const readme = read('README.md');
  const envExample = read('.env.example');
  const operations = readdirSync(join(REPO_ROOT, 'docs/operations')).filter((f) => f.endsWith('.md')).map((f) => read(`docs/operations/${f}`)).join('\n');

  for (const key of CONFIG_KEYS) {
    it(key, () => {
      assert.match(readme, new RegExp(`^\\| \`${key}\` \\| `, 'm'), `${key}: a row of the Configuration table in README.md`);
      assert.match(envExample, new RegExp(`^${key}=`, 'm'), `${key}: a line of .env.example`);
      assert.match(operations, new RegExp(`\\b${key}\\b`), `${key}: named in docs/operations/`);
    });
  }

  it('.env.example, copied to .env as it stands, starts the service on the defaults', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mandate-env-example-'));
    try {
      writeFileSync(join(dir, '.env'), envExample);
      const fromExample = parseConfig(loadEnv(dir, {}));
      const defaults = parseConfig({});
      assert.deepEqual({ ...fromExample, dataDir: '' }, { ...defaults, dataDir: '' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
