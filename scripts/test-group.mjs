// Runs several test files in this one process, each as a suite named after its file (its top-level
// hooks belong to that suite), for `scripts/run-tests.mjs`:
//   node --import tsx --test-reporter=spec scripts/test-group.mjs <file> ...   (paths from the cwd)
// One process per file pays Node's start, the TypeScript loader and the loading of the code under
// test (about 3 s of CPU for the server's) once per file; a group pays them once. Node 20 calls each
// describe's function as it is declared, so every file is imported before the first test runs, and
// the suites then run one after another. Exits 1 when a test fails (node:test sets the exit code).
import { describe } from 'node:test';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

for (const file of process.argv.slice(2)) describe(file, async () => { await import(pathToFileURL(resolve(file)).href); });
