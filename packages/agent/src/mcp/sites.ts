import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { FileStateStore } from '../state/file-state-store.ts';

export type SiteAccess = { site: string; scopes: string[]; grant_expires_at: string | null; uses_left: number | null };

/**
 * The sites this agent holds a grant for, as its directory remembers them (`state/<site>.json`,
 * written when a pass is issued): scopes and the grant's expiry, never the pass or refresh token.
 */
export async function sitesWithAccess(agentDir: string, agentId: string): Promise<SiteAccess[]> {
  let files: string[];
  try {
    files = readdirSync(join(agentDir, 'state')).filter((f) => f.endsWith('.json'));
  } catch {
    return []; // no state directory yet: no site so far
  }
  const store = new FileStateStore(agentDir);
  const sites: SiteAccess[] = [];
  for (const file of files.sort()) {
    const state = await store.read(file.slice(0, -'.json'.length)).catch(() => undefined);
    if (!state || state.agentId !== agentId) continue;
    sites.push({ site: state.site, scopes: state.scope, grant_expires_at: state.grantExpiresAt, uses_left: state.grantUsesLeft });
  }
  return sites;
}
