import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { REPO_ROOT } from './helpers/child-process.ts';

// npm ci warns EBADENGINE for every installed package whose `engines.node` the running Node does not
// satisfy (cookie@2 wanted Node 22 while the README supports Node 20). The lock file records each
// package's `engines`, so checking it against the oldest Node of every supported line (the root
// package.json's range) catches such a package the moment an update brings it in, on any Node.

type Lock = { packages: Record<string, { version?: string; engines?: Record<string, string> | string[] }> };

const read = <T>(file: string): T => JSON.parse(readFileSync(join(REPO_ROOT, file), 'utf8')) as T;

/** The oldest version of each line the range allows: "^20.19.0 || >=22.12.0" gives 20.19.0 and 22.12.0. */
function oldestSupported(range: string): string[] {
  return new semver.Range(range).set.map((comparators) => {
    const oldest = semver.minVersion(comparators.map((c) => c.value).join(' '));
    assert.ok(oldest, `no version satisfies ${range}`);
    return oldest.version;
  });
}

describe('package engines', () => {
  const supported = read<{ engines: { node: string } }>('package.json').engines.node;
  const versions = oldestSupported(supported);

  it('the supported Node versions are read from the root package.json', () => {
    assert.deepEqual(versions, ['20.19.0', '22.12.0']);
  });

  it('every package in package-lock.json runs on every supported Node version (no EBADENGINE at npm ci)', () => {
    const misfits: string[] = [];
    for (const [path, pkg] of Object.entries(read<Lock>('package-lock.json').packages)) {
      // An array is the long-deprecated form that npm ignores.
      const node = Array.isArray(pkg.engines) ? undefined : pkg.engines?.node;
      if (node === undefined) continue;
      const refused = versions.filter((v) => !semver.satisfies(v, node));
      if (refused.length > 0) misfits.push(`${path || '(root)'}@${pkg.version ?? '?'} wants node ${node}: not ${refused.join(', ')}`);
    }
    assert.deepEqual(misfits, [], `these would warn EBADENGINE on Node versions that ${supported} supports`);
  });
});
