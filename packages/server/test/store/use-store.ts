import { after, before } from 'node:test';
import type { Store } from '../../src/store/ports/index.ts';

/** Opens a fresh, migrated store; `cleanup` removes what it made. */
export type OpenStore = () => Promise<{ store: Store; cleanup: () => Promise<void> }>;

/**
 * The store of the enclosing suite: opened by `open` before its tests, closed and cleaned up after
 * them. Call it inside `describe`; the answer stands for that store (a proxy, since the store only
 * exists once the suite runs), so the tests write `store.grants...` as they would with the store.
 */
export function useStore(open: OpenStore): Store {
  let opened: { store: Store; cleanup: () => Promise<void> } | undefined;
  before(async () => {
    opened = await open();
  });
  after(async () => {
    await opened?.store.close();
    await opened?.cleanup();
  });
  return new Proxy({} as Store, {
    get(_target, name) {
      if (opened === undefined) throw new Error(`the store of this suite is used before it was opened (Store.${String(name)})`);
      const value: unknown = Reflect.get(opened.store, name);
      return typeof value === 'function' ? value.bind(opened.store) : value;
    },
    set(_target, name, value) {
      if (opened === undefined) throw new Error('the store of this suite is used before it was opened');
      return Reflect.set(opened.store, name, value);
    },
  });
}
