import { LIMITS, ProtocolError, type StepupClaims } from '@mandate/protocol';
import type { Store } from '../../store/ports/index.ts';
import type { Activity } from '../activity/activity.ts';

/**
 * Uses up a verified step-up token: its `jti` goes into the shared single-use table, which lets
 * exactly one of any number of concurrent callers on any number of nodes through (decisions §5).
 * The entry outlives the token by one more lifetime, so a node whose clock lags a little cannot
 * accept the token again after the entry is purged. Records `stepup.used` for the owner.
 */
export async function consumeStepup(
  deps: { store: Store; activity: Activity },
  claims: StepupClaims,
  now: number,
  ip: string | null,
): Promise<void> {
  const keepUntil = (claims.exp + LIMITS.stepupLifetimeSec) * 1000;
  const first = await deps.store.singleUse.consume('stepup', claims.jti, keepUntil, now);
  if (!first) throw new ProtocolError('stepup_used_or_expired', 'the step-up token was already used');
  await deps.activity.record({
    userId: claims.user,
    action: 'stepup.used',
    agentId: claims.sub,
    site: claims.aud,
    detail: { actions: claims.act },
    ip,
  });
}
