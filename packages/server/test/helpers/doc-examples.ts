import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from './child-process.ts';

// Guides cannot rot: a code block marked `<!-- example: <file>.ts -->` (or `... (run)`) just above
// its ```ts fence is written to a file as it stands, typechecked, and the `(run)` ones run by tests.

export type DocExample = { file: string; run: boolean; code: string };

/** The marked TypeScript examples of a guide (a path from the repository root), in order. */
export function docExamples(guide: string): DocExample[] {
  const text = readFileSync(join(REPO_ROOT, guide), 'utf8');
  return [...text.matchAll(/<!-- example: ([\w.-]+\.ts)( \(run\))? -->\n```ts\n([\s\S]*?)```/g)].map((m) => ({ file: m[1] ?? '', run: m[2] !== undefined, code: m[3] ?? '' }));
}

export interface MarkedBlock { marker: string; name: string; lang: string; text: string }

/**
 * A guide's fenced blocks, each with the `<!-- marker: name -->` line just above it (empty when
 * none), and `block(marker, name)`: the text of the one so marked (an assertion failure naming the
 * guide when there is none).
 */
export function markedBlocks(guide: string): { blocks: MarkedBlock[]; block: (marker: string, name: string) => string } {
  const text = readFileSync(join(REPO_ROOT, guide), 'utf8');
  const blocks = [...text.matchAll(/(?:<!-- ([a-z]+): ([\w.-]+) -->\n)?```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ marker: m[1] ?? '', name: m[2] ?? '', lang: m[3] ?? '', text: m[4] ?? '' }));
  const block = (marker: string, name: string): string => {
    const b = blocks.find((x) => x.marker === marker && x.name === name);
    assert.ok(b, `${guide}: no block marked <!-- ${marker}: ${name} -->`);
    return b.text;
  };
  return { blocks, block };
}

/** The bodies of a guide's ```sh blocks, in order. */
export function docShellBlocks(guide: string): string[] {
  const text = readFileSync(join(REPO_ROOT, guide), 'utf8');
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

/**
 * A reader's project outside the repository holding the examples as files: `"type": "module"`, and
 * node_modules linked to this checkout's (so `@mandate/*` are the built workspace packages).
 */
export function exampleProject(prefix: string, examples: readonly DocExample[]): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  for (const e of examples) writeFileSync(join(dir, e.file), e.code);
  return dir;
}

/** Typechecks the files with the repository's compiler settings; returns the diagnostics as text. */
export function typecheck(dir: string, files: string[]): string[] {
  const base = ts.readConfigFile(join(REPO_ROOT, 'tsconfig.base.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(base.config, ts.sys, dir);
  const program = ts.createProgram(
    files.map((f) => join(dir, f)),
    { ...parsed.options, noEmit: true, typeRoots: [join(REPO_ROOT, 'node_modules/@types')] },
  );
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : '';
    return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}
