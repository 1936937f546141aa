// Loaded with --import into the built service the process tests start: a module that resolves to
// TypeScript (a .ts file, or tsx itself) throws, in the main thread and in every worker thread (they
// inherit --import), so a test fails if the built service still needs a TypeScript loader anywhere.
import { register } from 'node:module';

const hook = `export async function resolve(specifier, context, next) {
  const found = await next(specifier, context);
  if (/\\.[cm]?ts$/.test(new URL(found.url).pathname) || found.url.includes('/node_modules/tsx/')) {
    throw new Error('the built service loaded TypeScript: ' + found.url);
  }
  return found;
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
