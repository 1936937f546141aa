import { forbidden, notFound } from '../errors.ts';
import { mayManagePasskeys } from '../passkeys/passkey-policy.ts';
import type { SessionMethod } from '../../store/ports/index.ts';
import type { OAuthProviderConfig } from '../../config/oauth-providers.ts';
import type { IdentityProviderDeps } from './deps.ts';

export interface ProviderView {
  name: string;
  label: string;
  linked: boolean;
}

/** The signed-in owner managing their sign-in methods. */
export interface ManagingOwner {
  userId: string;
  method: SessionMethod;
}

/** The configured provider of that name, or 404. */
export function providerNamed(d: IdentityProviderDeps, name: string): OAuthProviderConfig {
  const provider = d.providers.find((p) => p.name === name);
  if (!provider) throw notFound(`no identity provider named "${name}" is configured`);
  return provider;
}

/** GET /api/oauth/providers: every configured provider; `linked` for the signed-in owner (false signed out). */
export async function listProviders(d: IdentityProviderDeps, userId: string | null): Promise<ProviderView[]> {
  const linked = new Set(userId === null ? [] : (await d.store.oauthIdentities.listForUser(userId)).map((i) => i.provider));
  return d.providers.map((p) => ({ name: p.name, label: p.label, linked: linked.has(p.name) }));
}

/**
 * A linked provider can approve access requests, so linking or unlinking one is guarded like adding a
 * passkey (passkey-policy.ts): once the owner has a passkey, only a passkey session may change them,
 * or a phished password would be enough to link the attacker's account and approve with it.
 */
export async function requireIdentityManagement(d: IdentityProviderDeps, owner: ManagingOwner): Promise<void> {
  const passkeys = (await d.store.passkeys.listForUser(owner.userId)).length;
  if (!mayManagePasskeys(owner.method, passkeys)) {
    throw forbidden('sign in with one of your passkeys to link or unlink an identity provider', {
      next_step: 'sign in with a passkey you already have (GET /api/webauthn/login/options, then POST /api/webauthn/login/verify) and repeat this with that session',
    });
  }
}

/** DELETE /api/oauth/{provider}: the owner's identity at that provider no longer signs in or approves. */
export async function unlink(d: IdentityProviderDeps, owner: ManagingOwner, name: string, ip: string | null): Promise<void> {
  const provider = providerNamed(d, name);
  await requireIdentityManagement(d, owner);
  if (!(await d.store.oauthIdentities.unlink(owner.userId, provider.name))) throw notFound(`no ${provider.label} account is linked`);
  await d.activity.record({ userId: owner.userId, action: 'oauth.unlinked', detail: { provider: provider.name }, ip });
  await d.notifier.security(owner.userId, `${provider.label} unlinked`, `Your ${provider.label} account no longer signs you in to Mandate or approves requests.`);
}
