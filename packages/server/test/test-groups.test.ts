import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// `npm test` runs test files in groups, several per process (scripts/test-group.mjs). A group must
// keep each file's tests and top-level hooks under that file's suite, as a process per file did, and a
// file that fails to load must fail only itself. Checked on made-up test files.

const GROUP = fileURLToPath(new URL('../../../scripts/test-group.mjs', import.meta.url));

describe('test groups: several test files in one process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mandate-test-group-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  // A helper every file imports, slow to load: files imported together once filed their tests under
  // whichever file's import evaluated them.
  writeFileSync(join(dir, 'helper.mjs'), `await new Promise((r) => setTimeout(r, 50));\nexport const hooks = [];\n`);
  const fileWith = (name: string, body: string) => writeFileSync(join(dir, name), `import { after, before, describe, test } from 'node:test';\nimport { hooks } from './helper.mjs';\n${body}\n`);
  for (const name of ['a', 'b', 'c']) {
    fileWith(`${name}.test.mjs`, [
      `before(() => hooks.push('${name} before'));`,
      `after(() => { hooks.push('${name} after'); console.log('HOOKS ' + hooks.join(',')); });`,
      `test('${name}1', () => { if (hooks.at(-1) !== '${name} before') throw new Error('${name}: its own before hook did not run first'); });`,
      `describe('${name} suite', () => { test('${name}2', () => {}); });`,
    ].join('\n'));
  }
  fileWith('broken.test.mjs', `test('never', () => {});\nthrow new Error('this file cannot load');`);
  fileWith('failing.test.mjs', `test('fails', () => { throw new Error('a failing test'); });`);

  // Without NODE_TEST_CONTEXT, which `node --test` sets for its own files (it would make the group
  // report to this process's runner instead of printing TAP).
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_TEST_CONTEXT'));
  const run = (files: string[]) => spawnSync(process.execPath, ['--test-reporter=tap', GROUP, ...files], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
  /** Each top-level suite (a file) and the names of the tests and suites directly in it, from TAP. */
  const suites = (tap: string) => {
    const found = new Map<string, string[]>();
    let children: string[] = [];
    for (const line of tap.split('\n')) {
      const nested = /^ {4}# Subtest: (.+)$/.exec(line);
      if (nested?.[1]) children.push(nested[1]);
      const top = /^(?:not )?ok \d+ - (.+)$/.exec(line);
      if (top?.[1]) {
        found.set(top[1], children);
        children = [];
      }
    }
    return found;
  };

  it('files each test under its own file, runs each file\'s hooks around its own tests, in order', () => {
    const result = run(['a.test.mjs', 'b.test.mjs', 'c.test.mjs']);
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.deepEqual(Object.fromEntries(suites(result.stdout)), {
      'a.test.mjs': ['a1', 'a suite'],
      'b.test.mjs': ['b1', 'b suite'],
      'c.test.mjs': ['c1', 'c suite'],
    });
    assert.match(result.stdout, /HOOKS a before,a after,b before,b after,c before,c after/);
  });

  it('a file that cannot load fails its own suite; the files after it still run; a failed test fails the group', () => {
    const result = run(['a.test.mjs', 'broken.test.mjs', 'b.test.mjs']);
    assert.equal(result.status, 1);
    assert.match(result.stdout, /^not ok 2 - broken\.test\.mjs$/m);
    assert.match(result.stdout, /this file cannot load/);
    assert.deepEqual(suites(result.stdout).get('b.test.mjs'), ['b1', 'b suite']);
    assert.match(result.stdout, /^ok 3 - b\.test\.mjs$/m);
    const failing = run(['failing.test.mjs', 'c.test.mjs']);
    assert.equal(failing.status, 1);
    assert.match(failing.stdout, /^not ok 1 - failing\.test\.mjs$/m);
  });
});
