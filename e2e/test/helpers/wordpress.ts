import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../packages/server/test/helpers/server-process.ts';
import { until } from '../../../packages/server/test/helpers/until.ts';

/**
 * A real WordPress for the plugin's end-to-end test: Debian's /usr/share/wordpress copied into a
 * temporary folder (symbolic links kept), a fresh MariaDB database (root, empty password, as
 * `npm run test:setup` checks), a wp-config.php written here, PHP's built-in server with workers (so
 * that Mandate's back-channel logout is served while another request waits), and the installer run
 * over HTTP as a person would.
 */

const WORDPRESS = '/usr/share/wordpress';
const DB_HOST = process.env.WP_TEST_DB_HOST ?? '127.0.0.1';
const DB_PORT = Number(process.env.WP_TEST_DB_PORT ?? 3306);

/** Runs PHP code with the mysqli extension as MariaDB's root; throws with PHP's output on failure. */
function mysql(sql: string): void {
  const code = `mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT); $m = new mysqli(${JSON.stringify(DB_HOST)}, 'root', '', '', ${DB_PORT}); $m->query(${JSON.stringify(sql)}); echo 'ok';`;
  const r = spawnSync('php', ['-r', code], { encoding: 'utf8' });
  if (r.stdout.trim() !== 'ok') throw new Error(`MariaDB (${sql}): ${r.error ?? ''}${r.stdout}${r.stderr} (run npm run test:setup)`);
}

/** A router for PHP's built-in server: files as they are, every other path to WordPress's index.php (pretty permalinks). */
const ROUTER = `<?php
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
$file = $_SERVER['DOCUMENT_ROOT'] . $path;
if ($path !== '/' && is_file($file)) return false;
if (is_dir($file) && is_file(rtrim($file, '/') . '/index.php')) { $_SERVER['SCRIPT_NAME'] = rtrim($path, '/') . '/index.php'; chdir($file); require rtrim($file, '/') . '/index.php'; return; }
$_SERVER['SCRIPT_NAME'] = '/index.php';
require $_SERVER['DOCUMENT_ROOT'] . '/index.php';
`;

export class WordPressSite {
  private output = '';
  private constructor(readonly dir: string, readonly url: string, readonly db: string, private readonly php: ChildProcess) {
    php.stdout?.on('data', (d: Buffer) => (this.output += d.toString()));
    php.stderr?.on('data', (d: Buffer) => (this.output += d.toString()));
  }

  /** WordPress installed and serving on 127.0.0.1, with an administrator. */
  static async start(): Promise<WordPressSite> {
    const dir = mkdtempSync(join(tmpdir(), 'mandate-wp-'));
    const db = `mandate_wp_${process.pid}_${randomBytes(4).toString('hex')}`;
    cpSync(WORDPRESS, dir, { recursive: true, verbatimSymlinks: true });
    rmSync(join(dir, '.htaccess'), { force: true });
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const salt = (name: string) => `define(${JSON.stringify(name)}, ${JSON.stringify(randomBytes(32).toString('hex'))});`;
    writeFileSync(join(dir, 'wp-config.php'), [
      '<?php',
      `define('DB_NAME', '${db}'); define('DB_USER', 'root'); define('DB_PASSWORD', ''); define('DB_HOST', '${DB_HOST}:${DB_PORT}');`,
      "define('DB_CHARSET', 'utf8mb4'); define('DB_COLLATE', ''); $table_prefix = 'wp_';",
      `define('WP_HOME', '${url}'); define('WP_SITEURL', '${url}');`,
      "define('FS_METHOD', 'direct'); define('DISABLE_WP_CRON', true); define('WP_DEBUG', false); define('AUTOMATIC_UPDATER_DISABLED', true);",
      ...['AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY', 'AUTH_SALT', 'SECURE_AUTH_SALT', 'LOGGED_IN_SALT', 'NONCE_SALT'].map(salt),
      "if (!defined('ABSPATH')) define('ABSPATH', __DIR__ . '/');",
      "require_once ABSPATH . 'wp-settings.php';",
      '',
    ].join('\n'));
    writeFileSync(join(dir, 'router.php'), ROUTER);
    mysql(`CREATE DATABASE \`${db}\` CHARACTER SET utf8mb4`);
    const php = spawn('php', ['-S', `127.0.0.1:${port}`, '-t', dir, join(dir, 'router.php')], {
      // Its own process group: PHP_CLI_SERVER_WORKERS forks workers that a signal to the parent alone
      // leaves running (holding the output pipes open, so the test process would never exit).
      cwd: dir, env: { ...process.env, PHP_CLI_SERVER_WORKERS: '4' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
    const site = new WordPressSite(dir, url, db, php);
    await until('PHP\'s server to answer', async () => ((await fetch(`${url}/readme.html`).catch(() => undefined))?.ok ? true : undefined), { ms: 15_000, describe: () => site.logs() });
    const installed = await fetch(`${url}/wp-admin/install.php?step=2`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ weblog_title: 'Mandate test blog', user_name: 'admin', admin_password: 'correct horse battery', admin_password2: 'correct horse battery', pw_weak: '1', admin_email: 'admin@example.com', blog_public: '0', language: '' }),
    });
    const page = await installed.text();
    if (installed.status !== 200 || !/Success!|install-success|already installed/i.test(page)) throw new Error(`WordPress did not install: ${installed.status} ${page.slice(0, 2000)}\n${site.logs()}`);
    return site;
  }

  /**
   * Runs PHP inside this WordPress as a command-line script would (wp-load.php loaded, the admin's
   * include files available): what the test does instead of clicking in wp-admin. Answers stdout.
   */
  wp(code: string, ...args: string[]): string {
    const script = join(this.dir, `run-${randomBytes(4).toString('hex')}.php`);
    writeFileSync(script, [
      '<?php',
      `$_SERVER['HTTP_HOST'] = '${new URL(this.url).host}'; $_SERVER['REQUEST_URI'] = '/';`,
      "require __DIR__ . '/wp-load.php';",
      "require_once ABSPATH . 'wp-admin/includes/file.php';",
      "require_once ABSPATH . 'wp-admin/includes/plugin.php';",
      code,
      '',
    ].join('\n'));
    const r = spawnSync('php', [script, ...args], { encoding: 'utf8', cwd: this.dir });
    rmSync(script);
    if (r.status !== 0) throw new Error(`php in WordPress failed (${r.status}): ${r.stdout}${r.stderr}`);
    return r.stdout;
  }

  logs(): string {
    return this.output;
  }

  async stop(): Promise<void> {
    const pid = this.php.pid;
    if (pid !== undefined && this.php.exitCode === null) {
      const gone = new Promise((resolve) => this.php.once('exit', resolve));
      process.kill(-pid, 'SIGTERM');
      const late = setTimeout(() => process.kill(-pid, 'SIGKILL'), 5_000);
      await gone;
      clearTimeout(late);
    }
    // Workers may outlive the parent by a moment: the whole group goes.
    if (pid !== undefined) try { process.kill(-pid, 'SIGKILL'); } catch { /* already gone */ }
    try {
      mysql(`DROP DATABASE IF EXISTS \`${this.db}\``);
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
