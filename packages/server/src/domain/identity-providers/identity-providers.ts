import type { OAuthStateRecord } from '../../store/ports/index.ts';
import { type CallbackInput, type CallbackOutcome, finishFlow } from './callback.ts';
import type { IdentityProviderDeps } from './deps.ts';
import { type ManagingOwner, type ProviderView, listProviders, unlink } from './identities.ts';
import { type StartedFlow, startApproval, startBrowserFlow } from './start.ts';

/**
 * Identity providers (decisions §15): sign-in, linking and approval through OpenID Connect issuers.
 * One entry point (`s.identityProviders`) over the concept files of this folder.
 */
export class IdentityProviders {
  constructor(private readonly d: IdentityProviderDeps) {}

  /** GET /api/oauth/providers. */
  list(userId: string | null): Promise<ProviderView[]> {
    return listProviders(this.d, userId);
  }

  /** GET /api/oauth/{provider}/start: a link when signed in, else a sign-in. */
  start(provider: string, owner: ManagingOwner | null, ip: string): Promise<StartedFlow> {
    return startBrowserFlow(this.d, provider, owner, ip);
  }

  /** POST /api/txn/{txn_id}/oauth/{provider}: the issuer URL that approves this request after a fresh sign-in. */
  startApproval(provider: string, userId: string, txnId: string, limits: OAuthStateRecord['limits'], ip: string): Promise<string> {
    return startApproval(this.d, provider, userId, txnId, limits, ip);
  }

  /** GET /api/oauth/{provider}/callback. */
  finish(input: CallbackInput): Promise<CallbackOutcome> {
    return finishFlow(this.d, input);
  }

  /** DELETE /api/oauth/{provider}. */
  unlink(owner: ManagingOwner, provider: string, ip: string | null): Promise<void> {
    return unlink(this.d, owner, provider, ip);
  }
}
