import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './helpers/child-process.ts';
import { PLUGIN_DIR } from '../../../scripts/build-wordpress.mjs';

// docs/sites/wordpress.md against the plugin and the end-to-end test: the settings it lists are the
// plugin's, the addresses it names are the ones the plugin registers, and the example settings are
// exactly the ones e2e/test/wordpress.test.ts configures.

const doc = readFileSync(join(REPO_ROOT, 'docs/sites/wordpress.md'), 'utf8');
const plugin = (file: string) => readFileSync(join(REPO_ROOT, PLUGIN_DIR, file), 'utf8');
const e2e = readFileSync(join(REPO_ROOT, 'e2e/test/wordpress.test.ts'), 'utf8');

describe('docs/sites/wordpress.md', () => {
  it('lists every setting of the plugin, with the labels of its settings page', () => {
    const settings = plugin('includes/class-mandate-settings.php');
    const labels = [...settings.matchAll(/^\t\t\t'(\w+)'\s+=> array\( __\( '([^']+)', 'mandate' \)/gm)].map((m) => m[2]);
    assert.equal(labels.length, 8, 'the settings page has eight fields');
    const rows = [...doc.matchAll(/^\| ([A-Z][^|]+?) \| /gm)].map((m) => m[1]).filter((r) => r !== 'Setting');
    assert.deepEqual(rows, labels);
  });

  it('names the addresses the plugin registers and the download the service serves', () => {
    for (const route of ['/sign-in', '/callback', '/backchannel-logout']) {
      assert.ok(doc.includes(`/wp-json/mandate/v1${route}`), route);
      assert.match(readFileSync(join(REPO_ROOT, PLUGIN_DIR, 'includes', route === '/backchannel-logout' ? 'class-mandate-backchannel.php' : 'class-mandate-sign-in.php'), 'utf8'), new RegExp(`'${route}'`));
    }
    assert.ok(doc.includes('/download/wordpress'));
  });

  it('shows the example settings the end-to-end test configures', () => {
    const blocks = [...doc.matchAll(/<!-- settings: (\w+) -->\n```text\n([\s\S]*?)```/g)].map((m) => [m[1] ?? '', (m[2] ?? '').trimEnd()] as const);
    assert.deepEqual(blocks.map(([k]) => k), ['scope_caps', 'agent_routes', 'ciba_routes']);
    for (const [key, text] of blocks) {
      // In the test file the lines are a JS string (one line) or an array joined with \n.
      const expr = new RegExp(`${key}: (\\[[^\\]]*\\]\\.join\\('\\\\n'\\)|'[^']*')`).exec(e2e)?.[1];
      assert.ok(expr, `the e2e test sets ${key}`);
      const value = expr.startsWith('[')
        ? [...expr.matchAll(/'((?:[^'\\]|\\.)*)'/g)].map((m) => (m[1] ?? '').replace(/\\\\/g, '\\')).slice(0, -1).join('\n')
        : expr.slice(1, -1);
      assert.equal(value, text, key);
    }
  });
});
