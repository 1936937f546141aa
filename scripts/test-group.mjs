// Runs several test files in this one process, each as a suite named after its file (its tests and
// top-level hooks belong to that suite), for `scripts/run-tests.mjs`:
//   node --import tsx --test-reporter=spec scripts/test-group.mjs <file> ...   (paths from the cwd)
// One process per file pays Node's start, the TypeScript loader and the loading of the code under
// test (about 3 s of CPU for the server's) once per file; a group pays them once. The suites run one
// after another. Exits 1 when a test fails (node:test sets the exit code).
import { describe } from 'node:test';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

// One import at a time: a test file's `test()` calls join the suite whose function imported it (the
// suite is found through the async context), and imports in flight together let a module be
// evaluated in another import's context, filing its tests under another file (seen: eight files'
// tests all under one). Node 20 calls a describe's function as soon as it is declared.
for (const file of process.argv.slice(2)) {
  await new Promise((imported) => {
    describe(file, async () => {
      try {
        await import(pathToFileURL(resolve(file)).href);
      } finally {
        imported(); // a file that fails to load fails its suite; the next files still run
      }
    });
  });
}
