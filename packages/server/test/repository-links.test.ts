import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The README and the docs are read in a fresh clone: every file they point to must be in the
 * repository (not beside it, like the `../shared/` folder of a development machine, and not ignored
 * by git, like `data/`).
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** Top-level folders of the repository; a README code span or layout entry starting with one names a file. */
const TOP = ['packages', 'docs', 'examples', 'e2e', 'bench', 'scripts'];

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return markdownFiles(path);
    return e.isFile() && e.name.endsWith('.md') ? [path] : [];
  });
}

/** The text outside fenced code blocks (links in code samples are not links). */
const prose = (markdown: string): string => markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '');

/** Relative link targets (`[text](target)`) without their fragment; web addresses and anchors left out. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
    .map((m) => m[1] ?? '')
    .filter((href) => !/^[a-z][a-z0-9+.-]*:/i.test(href) && !href.startsWith('#') && !href.startsWith('/'))
    .map((href) => decodeURIComponent(href.split('#')[0] ?? ''));
}

/** Paths git ignores (so a clone lacks them); none when git or the .git folder is not there. */
function ignoredByGit(paths: string[]): Set<string> {
  if (paths.length === 0 || !existsSync(join(ROOT, '.git'))) return new Set();
  const res = spawnSync('git', ['check-ignore', '--no-index', '--stdin'], { cwd: ROOT, input: paths.join('\n'), encoding: 'utf8' });
  if (res.error) return new Set();
  return new Set(res.stdout.split('\n').filter(Boolean));
}

/** Problems with the files `targets` name from `file`: outside the repository, missing, or ignored by git. */
function problems(file: string, targets: string[]): string[] {
  const from = relative(ROOT, file);
  const found: string[] = [];
  const inside: string[] = [];
  for (const target of targets) {
    const path = relative(ROOT, resolve(dirname(file), target));
    if (path === '..' || path.startsWith(`..${sep}`)) found.push(`${from}: ${target} is outside the repository`);
    else if (!existsSync(join(ROOT, path))) found.push(`${from}: ${target} does not exist`);
    else inside.push(path);
  }
  for (const path of ignoredByGit(inside)) found.push(`${from}: ${path} is ignored by git, so a clone lacks it`);
  return found;
}

describe('links in the README and the docs work in a fresh clone', () => {
  const readmePath = join(ROOT, 'README.md');
  const readme = readFileSync(readmePath, 'utf8');

  it('the README names the contract inside the repository, never ../shared', () => {
    assert.doesNotMatch(readme, /\.\.\/shared\b/);
    assert.ok(relativeLinks(readme).includes('docs/reference/interface.md'), 'the README links the interface specification');
    assert.ok(relativeLinks(readme).includes('docs/reference/decisions.md'), 'the README links the decisions');
    for (const page of ['interface', 'decisions']) {
      const text = readFileSync(join(ROOT, 'docs/reference', `${page}.md`), 'utf8');
      assert.match(text, /^# \S/, `docs/reference/${page}.md starts with its title`);
    }
  });

  it('every relative link of the README and of every doc names a file of the repository', () => {
    const files = [readmePath, ...markdownFiles(join(ROOT, 'docs'))];
    const found = files.flatMap((file) => problems(file, relativeLinks(readFileSync(file, 'utf8'))));
    assert.deepEqual(found, []);
  });

  it('no doc points outside the repository, in a link or in code', () => {
    const found = markdownFiles(join(ROOT, 'docs'))
      .filter((file) => /\.\.\/shared\b/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    assert.deepEqual(found, []);
  });

  it('the paths the README quotes (`docs/...`, `packages/...`) and its layout block exist', () => {
    const spans = [...prose(readme).matchAll(/`([^`\s]+)`/g)].map((m) => m[1] ?? '');
    const layout = /## Layout\n+```\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    assert.ok(layout.length > 0, 'the README has a layout block');
    const inLayout = [...layout.matchAll(/(?:^|[\s(])((?:[\w.-]+\/)+[\w.-]*)/gm)].map((m) => m[1] ?? '');
    const paths = [...spans, ...inLayout]
      .map((p) => p.replace(/[.,;:)]+$/, ''))
      .filter((p) => p.startsWith('../') || TOP.some((top) => p === top || p.startsWith(`${top}/`)));
    assert.ok(paths.length > 15, `the README quotes paths: ${paths.join(' ')}`);
    assert.deepEqual(problems(readmePath, [...new Set(paths)]), []);
  });
});
