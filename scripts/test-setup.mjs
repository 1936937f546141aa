#!/usr/bin/env node
// Installs and starts what the test suites need beyond npm packages:
//  - Debian's Chromium (the passkey end-to-end tests drive it with a virtual authenticator);
//  - a reachable PostgreSQL (the PostgreSQL suites run for real, never skipped);
//  - PHP, WordPress and MariaDB for the WordPress plugin's end-to-end test;
//  - a Node 22 for the MCP conformance suite (scripts/node22.mjs).
// Safe to run repeatedly: it only acts on what is missing.
import { execSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';
import { installNode22, NODE22 } from './node22.mjs';

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

// The WordPress end-to-end test (e2e/test/wordpress.test.ts) runs Debian's WordPress on PHP's built-in server
// against MariaDB. php-cli runs the site and `php -l`; the extensions are the ones WordPress and the plugin use
// (mysqli, curl for the HTTP API, xml, mbstring; openssl and json are built in). Debian starts no service when
// installing on these machines (policy-rc.d), so the apache2 that `wordpress` depends on stays stopped.
const PHP_PACKAGES = ['php-cli', 'php-mysql', 'php-curl', 'php-xml', 'php-mbstring', 'wordpress'];
const phpModules = () => spawnSync('php', ['-m'], { encoding: 'utf8' }).stdout?.toLowerCase() ?? '';
const phpReady = () => {
  const modules = phpModules();
  return ['mysqli', 'curl', 'xml', 'mbstring', 'openssl', 'json'].every((m) => modules.includes(m)) &&
    existsSync('/usr/share/wordpress/wp-settings.php');
};
if (!phpReady()) {
  if (!isRoot) fail(`PHP or WordPress is missing; install them with: sudo apt-get update && sudo apt-get install -y ${PHP_PACKAGES.join(' ')}`);
  console.log(`test-setup: installing Debian ${PHP_PACKAGES.join(' ')} ...`);
  sh(`apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${PHP_PACKAGES.join(' ')}`);
  if (!phpReady()) fail('PHP or WordPress still incomplete after installing (php -m lacks a module, or /usr/share/wordpress is missing)');
}
console.log(`test-setup: PHP ok (${spawnSync('php', ['-r', 'echo PHP_VERSION;'], { encoding: 'utf8' }).stdout}), WordPress ok (/usr/share/wordpress)`);

const MARIADB = { host: process.env.WP_TEST_DB_HOST ?? '127.0.0.1', port: Number(process.env.WP_TEST_DB_PORT ?? 3306) };
const tcpReachable = (host, port) =>
  new Promise((resolve) => {
    const s = net.connect(port, host, () => (s.end(), resolve(true)));
    s.on('error', () => resolve(false));
    s.setTimeout(2000, () => (s.destroy(), resolve(false)));
  });
if (!(await tcpReachable(MARIADB.host, MARIADB.port))) {
  if (['127.0.0.1', 'localhost'].includes(MARIADB.host) && isRoot && existsSync('/usr/sbin/mariadbd')) {
    console.log('test-setup: starting MariaDB ...');
    spawnSync('start-stop-daemon', ['--start', '--oknodo', '--background', '--exec', '/usr/sbin/mariadbd'], { stdio: 'inherit' });
  }
  for (let i = 0; i < 30 && !(await tcpReachable(MARIADB.host, MARIADB.port)); i++) await new Promise((r) => setTimeout(r, 500));
  if (!(await tcpReachable(MARIADB.host, MARIADB.port))) fail(`MariaDB is not reachable at ${MARIADB.host}:${MARIADB.port} (the WordPress test needs root with an empty password)`);
}
// Reachable is not enough: the test signs in as root with an empty password to create its database.
const login = spawnSync('php', ['-r', `mysqli_report(MYSQLI_REPORT_OFF); $m = @new mysqli('${MARIADB.host}', 'root', '', '', ${MARIADB.port}); echo $m->connect_errno ? $m->connect_error : 'ok';`], { encoding: 'utf8' });
if (login.stdout.trim() !== 'ok') fail(`MariaDB at ${MARIADB.host}:${MARIADB.port} refuses root with an empty password: ${login.stdout.trim() || login.stderr.trim()}`);
console.log(`test-setup: MariaDB ok (${MARIADB.host}:${MARIADB.port})`);

// The MCP conformance suite needs Node 22+; this repository runs on Node 20 (scripts/node22.mjs).
try {
  console.log(`test-setup: Node 22 ok (${installNode22()} at ${NODE22})`);
} catch (e) {
  fail(e instanceof Error ? e.message : String(e));
}
