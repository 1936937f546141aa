/**
 * Outbox fairness (issue 22): an ordinary owner's approval push latency, alone and beside a hostile
 * account, in one run, for each server variant (this checkout, and the code before a change when
 * `--before DIR` names another checkout of the repository).
 *
 *   node --import tsx bench/outbox-fairness.ts [--approvals 8] [--before /tmp/outbox-old]
 *
 * Per variant, a fresh Mandate process (SQLite in a temp dir, OUTBOUND_ALLOW_LOOPBACK, OUTBOX_POLL_MS
 * 100) and the web push service stand-in (packages/server/test/helpers/stand-ins/push-service.ts, in
 * this process, decrypting every push). The ordinary owner has one phone that answers at once and
 * one agent, which asks for access `--approvals` times, one request every 2 s; the latency of one is
 * from the request's answer to the approval push reaching the phone (polled every 5 ms). Three
 * unmeasured requests first warm the process up.
 *   - *alone* (the baseline): nothing else on the service.
 *   - *beside a hostile account*: first the hostile account registers 50 devices whose endpoints take
 *     the push and never answer (the guard gives up after 5 s), adds an agent (50 pushes) and the agent
 *     sends 20 notes (1 000 pushes); it then sends a note every 2 s (the allowed 30 a minute) while the
 *     ordinary requests are made. An approval not seen after 150 s counts as 150 s (`>`).
 * Columns: median and worst latency, the ratio of the medians (beside hostile / alone, same process),
 * and how many pushes to the hostile devices were sent while the ordinary requests were timed (each
 * hangs until the sender gives up: the senders' time the hostile account took).
 * Nothing here asserts a time; figures are in bench/README.md ("Outbox fairness").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HttpOwner, call, expectStatus, remoteAccessRequest, remoteAgent, type RemoteAgent, type Target } from '../packages/server/test/helpers/over-http.ts';
import { startPushService, type PushServiceStandIn, type SubscriptionJson } from '../packages/server/test/helpers/stand-ins/push-service.ts';
import { freePort, startMandate } from './lib/processes.ts';

const HOSTILE_DEVICES = 50;
const FIRST_NOTES = 20;
const EVERY_MS = 2_000;
const GIVE_UP_MS = 150_000;

interface Variant {
  name: string;
  /** Another checkout to run the server from; undefined: this one. */
  cwd: string | undefined;
}

interface Figures {
  latencies: number[];
  /** Latencies not seen before GIVE_UP_MS. */
  missed: number;
  /** Pushes to the hostile account's devices while the ordinary requests were timed (every one hangs). */
  hostileSends: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
};

async function subscribe(server: Target, push: PushServiceStandIn, owner: HttpOwner, name: string): Promise<SubscriptionJson> {
  const sub = push.newSubscription(name);
  expectStatus(await call(server, 'POST', '/api/push', { ...sub, expirationTime: null, name }, owner.auth), 200, `subscribe ${name}`);
  return sub;
}

/** `count` requests, one every EVERY_MS, each timed until its approval push reaches `phone`. */
async function approvals(server: Target, push: PushServiceStandIn, agent: RemoteAgent, phone: SubscriptionJson, count: number, label: string): Promise<Figures> {
  const figures: Figures = { latencies: [], missed: 0, hostileSends: 0 };
  const waits: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    if (i > 0) await sleep(EVERY_MS);
    const txn = expectStatus(await remoteAccessRequest(server, agent, `${label}${i}.example`), 200, 'access request').body.txn_id;
    const t0 = Date.now();
    waits.push((async () => {
      while (Date.now() - t0 < GIVE_UP_MS) {
        if (push.received(phone).some((p) => (p as { txn_id?: string }).txn_id === txn)) {
          figures.latencies.push(Date.now() - t0);
          return;
        }
        await sleep(5);
      }
      figures.missed++;
      figures.latencies.push(GIVE_UP_MS);
    })());
  }
  await Promise.all(waits);
  return figures;
}

async function runVariant(v: Variant, count: number): Promise<{ alone: Figures; hostile: Figures }> {
  const push = await startPushService();
  const dataDir = mkdtempSync(join(tmpdir(), 'mandate-bench-fair-'));
  const port = await freePort();
  const baseUrl = `http://localhost:${port}`;
  const proc = await startMandate({ name: v.name, databaseUrl: '', dataDir, baseUrl, port, env: { OUTBOUND_ALLOW_LOOPBACK: 'true', OUTBOX_POLL_MS: '100' }, ...(v.cwd ? { cwd: v.cwd } : {}) });
  const server: Target = { url: proc.origin };
  /** POSTs the stand-in neither accepted nor refused: the hostile account's (the ordinary phone accepts all). */
  const hung = (): number => push.requests - push.all().length - push.rejections.length;
  let stopNotes = false;
  try {
    push.expectVapidKey(expectStatus(await call<{ vapid_public_key: string }>(server, 'GET', '/api/push/keys'), 200, 'keys').body.vapid_public_key);
    const ordinary = await HttpOwner.signUp(server, baseUrl, { label: 'ordinary' });
    const phone = await subscribe(server, push, ordinary, 'phone');
    const agent = await remoteAgent(server, ordinary, 'Shop assistant');
    await sleep(500); // its agent_added push
    await approvals(server, push, agent, phone, 3, 'warm-up'); // unmeasured: JIT, prepared statements
    const alone = await approvals(server, push, agent, phone, count, 'alone');

    const hostile = await HttpOwner.signUp(server, baseUrl, { label: 'hostile' });
    for (let i = 0; i < HOSTILE_DEVICES; i++) push.behave(await subscribe(server, push, hostile, `silent ${i}`), { hang: true });
    const chatty = await remoteAgent(server, hostile, 'Chatty');
    const note = async (i: number) => {
      const r = await call(server, 'POST', '/api/v1/agent-notify', { agent_id: chatty.id, agent_jwt: await chatty.jwt(), title: `Note ${i}`, text: 'x'.repeat(200) });
      if (r.status !== 200 && r.status !== 429) throw new Error(`note ${i}: ${r.status} ${JSON.stringify(r.body)}`);
    };
    for (let i = 0; i < FIRST_NOTES; i++) await note(i);
    const hungBefore = hung();
    const notes = (async () => {
      for (let i = FIRST_NOTES; !stopNotes; i++) {
        await note(i);
        await sleep(EVERY_MS);
      }
    })();
    const beside = await approvals(server, push, agent, phone, count, 'hostile');
    stopNotes = true;
    await notes;
    beside.hostileSends = hung() - hungBefore;
    return { alone, hostile: beside };
  } finally {
    stopNotes = true;
    await proc.stop();
    await push.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function outboxFairness(opts: { approvals?: number; before?: string } = {}): Promise<string> {
  const count = opts.approvals ?? 8;
  const variants: Variant[] = [{ name: 'this checkout', cwd: undefined }];
  if (opts.before) variants.push({ name: `before (${opts.before})`, cwd: opts.before });
  const fmt = (f: Figures) => `${median(f.latencies).toFixed(0)} | ${f.missed ? '>' : ''}${Math.max(...f.latencies).toFixed(0)}`;
  const rows: string[] = [];
  for (const v of variants) {
    const { alone, hostile } = await runVariant(v, count);
    const ratio = median(hostile.latencies) / median(alone.latencies);
    rows.push(`| ${v.name}: alone (baseline) | ${fmt(alone)} | | |`);
    rows.push(`| ${v.name}: beside the hostile account | ${fmt(hostile)} | ${ratio.toFixed(1)} x alone${hostile.missed ? ` (${hostile.missed} not seen in ${GIVE_UP_MS / 1000} s)` : ''} | ${hostile.hostileSends} |`);
  }
  return [
    `\n### outbox fairness: ordinary approval push latency, ${count} requests 2 s apart (ms)\n`,
    '| server, scenario | p50 | worst | ratio | hostile pushes sent meanwhile |',
    '|---|---:|---:|---|---:|',
    ...rows,
  ].join('\n');
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const n = Number(flag('--approvals') ?? 8);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error('--approvals must be a positive integer');
  const before = flag('--before');
  console.log(await outboxFairness({ approvals: n, ...(before ? { before } : {}) }));
}
