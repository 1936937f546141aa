/**
 * What the SDK keeps per site between calls and restarts: the current pass and, above all, the
 * current refresh token. Refresh tokens are single use, so the new one must be stored before the
 * pass is used, and only one holder may refresh at a time (`withLock`).
 */
export type SiteState = {
  /** The agent the tokens belong to; state of another agent id is ignored. */
  agentId: string;
  site: string;
  accessToken: string;
  /** Epoch ms (by the SDK's clock) when the pass was received and when it expires. */
  issuedAt: number;
  expiresAt: number;
  refreshToken: string;
  scope: string[];
  grantExpiresAt: string | null;
  grantUsesLeft: number | null;
};

export interface StateStore {
  read(site: string): Promise<SiteState | undefined>;
  write(state: SiteState): Promise<void>;
  remove(site: string): Promise<void>;
  /** Runs `fn` while no other holder (in this process or, for files, any process) runs one for `site`. */
  withLock<T>(site: string, fn: () => Promise<T>): Promise<T>;
}

/** Checks the shape of a stored state (a hand-edited or truncated file must not crash a refresh). */
export function isSiteState(value: unknown): value is SiteState {
  const v = value as Record<string, unknown> | null;
  return (
    typeof v === 'object' && v !== null &&
    typeof v['agentId'] === 'string' && typeof v['site'] === 'string' &&
    typeof v['accessToken'] === 'string' && typeof v['refreshToken'] === 'string' &&
    typeof v['issuedAt'] === 'number' && typeof v['expiresAt'] === 'number' &&
    Array.isArray(v['scope']) && v['scope'].every((s) => typeof s === 'string') &&
    (v['grantExpiresAt'] === null || typeof v['grantExpiresAt'] === 'string') &&
    (v['grantUsesLeft'] === null || typeof v['grantUsesLeft'] === 'number')
  );
}
