// What can be reloaded, by name. A view registers its loader; anyone may ask for a reload after a
// change (approving changes pending, grants and activity) without importing the view.

export type LoaderName = 'me' | 'agents' | 'devices' | 'activity' | 'notifications' | 'settings' | 'sites' | 'plans' | 'connections';

const loaders = new Map<LoaderName, () => Promise<void>>();

export function registerLoader(name: LoaderName, load: () => Promise<void>): void {
  loaders.set(name, load);
}

/** Runs the named loaders together; the first failure is thrown after all have finished. */
export async function reload(...names: LoaderName[]): Promise<void> {
  const results = await Promise.allSettled(names.map((n) => loaders.get(n)?.() ?? Promise.resolve()));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
