import { InvalidInputError, PasswordManagerOffError } from './client/errors.ts';
import type { AgentStatus } from './client/types.ts';

/** A secret as the password manager lists it: what it is for, never its value. */
export type SecretSummary = { id: string; site: string; label: string };

/**
 * The agent's password manager (its vault): it holds the secrets and fills them into the agent's
 * browser. The Mandate service holds no secret and defines no endpoint for them; what it decides is
 * whether the agent may use its password manager at all (decisions §17), and `MandateAgent` asks it
 * before every call (`listSecrets`, `fillSecret`, `saveSecret`), so an owner's "off" holds at once.
 */
export interface PasswordManager {
  /** The secrets kept for a site (site id as `normalizeSiteId` gives it). */
  listSecrets(site: string): Promise<SecretSummary[]>;
  /** Fills the secret `secretId` into the site's page in the agent's browser. */
  fillSecret(site: string, secretId: string): Promise<void>;
  /** Keeps a new secret for the site; answers how it is listed. */
  saveSecret(site: string, secret: { label: string; value: string }): Promise<SecretSummary>;
}

export type PasswordManagerFunction = 'listSecrets' | 'fillSecret' | 'saveSecret';

/** The refusal: PasswordManagerOffError while the service says `off`; `on`, `not_applicable` (or an older service's silence) let it through. */
export function checkPasswordManagerAllowed(status: Pick<AgentStatus, 'password_manager'>, fn: PasswordManagerFunction): void {
  if (status.password_manager === 'off') throw new PasswordManagerOffError(fn);
}

/** The caller's password manager, or InvalidInputError naming the option to set (caught before anything is sent). */
export function configuredPasswordManager(pm: PasswordManager | undefined, fn: PasswordManagerFunction): PasswordManager {
  if (pm === undefined) throw new InvalidInputError(`${fn} needs the agent's password manager: pass it as the passwordManager option of MandateAgent`);
  return pm;
}
