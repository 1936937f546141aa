import { Worker } from 'node:worker_threads';

/**
 * The module named `name` beside the module at `base` (its `import.meta.url`), with base's own
 * extension: `.js` in the built service (dist/), `.ts` when the sources run under tsx (tests, development).
 */
export const siblingModule = (name: string, base: string): URL => new URL(`${name}${base.endsWith('.ts') ? '.ts' : '.js'}`, base);

/**
 * Starts a worker thread on a module of the service. Built JavaScript loads as it is. A TypeScript
 * source runs through tsx (`node --import tsx`), whose loader a worker thread does not inherit
 * (Node 20): that worker registers it before loading the file.
 */
export function startWorker(file: URL, workerData?: unknown): Worker {
  if (!file.pathname.endsWith('.ts')) return new Worker(file, { workerData });
  const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => {
  tsx.register();
  return import(${JSON.stringify(file.href)});
});`;
  return new Worker(boot, { eval: true, workerData });
}
