import { Worker } from 'node:worker_threads';

/**
 * Starts a worker thread on a TypeScript file of the service. The service runs its TypeScript
 * through tsx (`node --import tsx`), whose loader a worker thread does not inherit (Node 20): the
 * worker registers it before loading the file.
 */
export function startTsWorker(file: URL, workerData?: unknown): Worker {
  const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => {
  tsx.register();
  return import(${JSON.stringify(file.href)});
});`;
  return new Worker(boot, { eval: true, workerData });
}
