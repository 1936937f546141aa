// `npm start`: the service, built to JavaScript (packages/server/dist/main.js). A missing or stale
// build (a fresh clone without `npm ci`'s prepare step, or edited sources) is made first, and so are
// the SDK tarballs it serves at /download/agent and /download/site.
import { ensureBuilt } from './build-if-stale.mjs';

try {
  ensureBuilt();
} catch (e) {
  process.stderr.write(`mandate: cannot start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}
// Stack traces name the TypeScript sources (the build ships source maps).
process.setSourceMapsEnabled(true);
await import('../packages/server/dist/main.js');
