import { KeyedMutex } from './mutex.ts';
import type { SiteState, StateStore } from './state-store.ts';

/** Keeps state in memory only: for short-lived agents, or when another layer persists it. */
export class MemoryStateStore implements StateStore {
  private readonly sites = new Map<string, SiteState>();
  private readonly mutex = new KeyedMutex();

  async read(site: string): Promise<SiteState | undefined> {
    const s = this.sites.get(site);
    return s ? { ...s, scope: [...s.scope] } : undefined;
  }

  async write(state: SiteState): Promise<void> {
    this.sites.set(state.site, { ...state, scope: [...state.scope] });
  }

  async remove(site: string): Promise<void> {
    this.sites.delete(site);
  }

  withLock<T>(site: string, fn: () => Promise<T>): Promise<T> {
    return this.mutex.run(site, fn);
  }
}
