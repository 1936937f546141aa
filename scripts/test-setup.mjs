#!/usr/bin/env node
// Installs and starts what the test suites need beyond npm packages:
//  - Debian's Chromium (the passkey end-to-end tests drive it with a virtual authenticator);
//  - a reachable PostgreSQL (the PostgreSQL suites run for real, never skipped).
// Safe to run repeatedly: it only acts on what is missing.
import { execSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const PG_URL = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const isRoot = process.getuid?.() === 0;
const sh = (cmd) => execSync(cmd, { stdio: 'inherit' });

function fail(message) {
  console.error(`test-setup: ${message}`);
  process.exit(1);
}

if (!existsSync(CHROMIUM)) {
  if (!isRoot) fail(`Chromium is missing at ${CHROMIUM}; install it with: sudo apt-get update && sudo apt-get install -y chromium`);
  console.log('test-setup: installing Debian chromium ...');
  sh('apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium');
}
console.log(`test-setup: chromium ok (${CHROMIUM})`);

const reachable = () =>
  new Promise((resolve) => {
    const s = net.connect(Number(PG_URL.port || 5432), PG_URL.hostname, () => (s.end(), resolve(true)));
    s.on('error', () => resolve(false));
    s.setTimeout(2000, () => (s.destroy(), resolve(false)));
  });

if (!(await reachable())) {
  const local = ['127.0.0.1', 'localhost'].includes(PG_URL.hostname);
  if (local && isRoot && existsSync('/etc/postgresql')) {
    for (const version of readdirSync('/etc/postgresql')) {
      console.log(`test-setup: starting PostgreSQL ${version} ...`);
      spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'start'], { stdio: 'inherit' });
    }
  }
  for (let i = 0; i < 30 && !(await reachable()); i++) await new Promise((r) => setTimeout(r, 500));
  if (!(await reachable())) fail(`PostgreSQL is not reachable at ${PG_URL.host}; start it or set TEST_DATABASE_URL`);
}
console.log(`test-setup: PostgreSQL ok (${PG_URL.host})`);
