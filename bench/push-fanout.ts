/**
 * Web push fan-out: pushes per second to 1,000 subscribed devices through the server's
 * `webPushTransport` and the outbound guard (loopback allowed), beside a baseline measured in the
 * same run: the `web-push` library's own request building alone (`generateRequestDetails`: aes128gcm
 * encryption and the VAPID JWT) for the same subscriptions, nothing sent.
 *
 *   node --import tsx bench/push-fanout.ts [--devices 1000] [--rounds 4] [--concurrency 64]
 *   npm run bench -- --suites push [--rounds N]     (1,000 devices, 64 in flight)
 *
 * The push service stand-in (packages/server/test/helpers/stand-ins/push-service.ts) runs in a child
 * process, so the CPU it spends checking VAPID and decrypting is not counted as the sender's; every
 * push is still checked and decrypted there, and a round with a rejection is reported as errors.
 *
 * Registered in bench/run.ts as the suite `push` (`npm run bench -- --suites push`); what it measures
 * and the figures are in bench/README.md.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import webpush from 'web-push';
import type { PushOptions, PushPayload } from '../packages/server/src/delivery/push-port.ts';
import { generateVapidKeys, webPushTransport } from '../packages/server/src/delivery/web-push.ts';
import { guardedFetch } from '../packages/server/src/outbound/guarded-fetch.ts';
import { startPushService, type SubscriptionJson } from '../packages/server/test/helpers/stand-ins/push-service.ts';

export interface PushFanoutOptions {
  devices?: number;
  rounds?: number;
  concurrency?: number;
}

type ToChild = { cmd: 'subscribe'; count: number; vapidPublicKey: string } | { cmd: 'stats' } | { cmd: 'reset' };
type FromChild = { subs: SubscriptionJson[] } | { delivered: number; rejected: number; firstRejection: string | undefined };

const PAYLOAD: PushPayload = {
  type: 'approval',
  id: 'n_7yq2c4h3kq6ezb2wqz3v5xq6ke',
  title: 'Shop assistant asks to pay 42.00 EUR',
  body: 'at demo-shop.example: 2 items, delivery on Friday',
  url: '/app#requests/t_7yq2c4h3kq6ezb2wqz3v5xq6ke',
  kind: 'access',
  txn_id: 't_7yq2c4h3kq6ezb2wqz3v5xq6ke',
  expires_at: '2026-11-22T12:05:00.000Z',
};
const OPTIONS: PushOptions = { ttlSec: 300, urgency: 'high', topic: 'n_7yq2c4h3kq6ezb2wqz3v5xq6ke' };
const SUBJECT = 'mailto:operator@example.com';

/** The child's side: the stand-in, driven over IPC. */
async function serveStandIn(): Promise<void> {
  const service = await startPushService();
  const send = (m: FromChild) => process.send?.(m);
  process.on('message', (m: ToChild) => {
    if (m.cmd === 'subscribe') {
      service.expectVapidKey(m.vapidPublicKey);
      send({ subs: Array.from({ length: m.count }, (_, i) => service.newSubscription(`device-${i}`)) });
    } else if (m.cmd === 'stats') {
      send({ delivered: service.all().length, rejected: service.rejections.length, firstRejection: service.rejections[0]?.reason });
    } else {
      service.reset();
      send({ delivered: 0, rejected: 0, firstRejection: undefined });
    }
  });
  process.on('disconnect', () => void service.close().finally(() => process.exit(0)));
}

function ask<T extends FromChild>(child: ChildProcess, m: ToChild): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (answer: T) => resolve(answer));
    child.send(m);
  });
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
};

interface Round {
  perSec: number;
  cpuUsPerOp: number;
  errors: number;
}

/** Wall and CPU time of `work`, which does `ops` operations. */
async function measure(ops: number, work: () => Promise<number>): Promise<Round> {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const errors = await work();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  return { perSec: ops / seconds, cpuUsPerOp: (cpu.user + cpu.system) / ops, errors };
}

export async function pushFanout(opts: PushFanoutOptions = {}): Promise<string> {
  const devices = opts.devices ?? 1000;
  const rounds = opts.rounds ?? 4;
  const concurrency = opts.concurrency ?? 64;
  const child = fork(fileURLToPath(import.meta.url), ['--stand-in'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const vapid = { ...generateVapidKeys(), subject: SUBJECT };
    const { subs } = await ask<{ subs: SubscriptionJson[] }>(child, { cmd: 'subscribe', count: devices, vapidPublicKey: vapid.publicKey });
    const targets = subs.map((s) => ({ endpoint: s.endpoint, p256dh: s.keys.p256dh, auth: s.keys.auth }));
    const transport = webPushTransport({ vapid, fetch: guardedFetch({ allowLoopback: true }) });
    const json = JSON.stringify(PAYLOAD);
    const vapidDetails = { subject: vapid.subject, publicKey: vapid.publicKey, privateKey: vapid.privateKey };

    const baseline = () =>
      measure(devices, async () => {
        for (const s of subs) webpush.generateRequestDetails(s, json, { vapidDetails, TTL: OPTIONS.ttlSec, urgency: OPTIONS.urgency, topic: OPTIONS.topic, contentEncoding: 'aes128gcm' });
        return 0;
      });
    const fanout = () =>
      measure(devices, async () => {
        let next = 0;
        let failed = 0;
        const worker = async () => {
          for (let i = next++; i < targets.length; i = next++) {
            const target = targets[i];
            if (target !== undefined && (await transport.send(target, PAYLOAD, OPTIONS)).outcome !== 'sent') failed++;
          }
        };
        await Promise.all(Array.from({ length: Math.min(concurrency, devices) }, worker));
        const stats = await ask<{ delivered: number; rejected: number; firstRejection: string | undefined }>(child, { cmd: 'stats' });
        if (stats.rejected > 0) console.error(`push service rejected ${stats.rejected}: ${stats.firstRejection}`);
        await ask(child, { cmd: 'reset' });
        return Math.max(failed, devices - stats.delivered);
      });

    await baseline(); // warm-up: JIT, the guard's first connections
    await fanout();
    const base: Round[] = [];
    const push: Round[] = [];
    for (let r = 0; r < rounds; r++) {
      base.push(await baseline());
      push.push(await fanout());
    }
    const ratios = push.map((p, i) => p.perSec / (base[i]?.perSec ?? NaN)).sort((a, b) => a - b);
    const row = (name: string, rs: Round[], ratio: string) =>
      `| ${name} | ${median(rs.map((r) => r.perSec)).toFixed(0)} | ${median(rs.map((r) => r.cpuUsPerOp)).toFixed(0)} | ${rs.reduce((n, r) => n + r.errors, 0)} | ${ratio} |`;
    return [
      `\n### web push fan-out to ${devices} devices (${concurrency} in flight, ${rounds} rounds, median)\n`,
      '| scenario | ops/s | CPU µs/op (sender) | errors | ratio |',
      '|---|---:|---:|---:|---|',
      row('baseline: web-push generateRequestDetails, nothing sent', base, ''),
      row('webPushTransport through the guarded fetch to the stand-in', push, `${median(ratios).toFixed(2)} x baseline (rounds ${ratios[0]?.toFixed(2)}-${ratios.at(-1)?.toFixed(2)})`),
    ].join('\n');
  } finally {
    child.disconnect();
  }
}

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const v = i < 0 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isSafeInteger(v) || v < 1) throw new Error(`${name} must be a positive integer`);
  return v;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes('--stand-in')) await serveStandIn();
  else console.log(await pushFanout({ devices: flag('--devices', 1000), rounds: flag('--rounds', 4), concurrency: flag('--concurrency', 64) }));
}
