import { storeContract } from './contract.ts';
import { appsContract } from './contract-apps.ts';
import { accountDataContract } from './contract-account-data.ts';
import { deliveryContract } from './contract-delivery.ts';
import { emailContract } from './contract-email.ts';
import { identityProvidersContract } from './contract-identity-providers.ts';
import { keyRevokeContract } from './contract-key-revoke.ts';
import { loginThrottleContract } from './contract-login-throttle.ts';
import { metricsContract } from './contract-metrics.ts';
import { oidcContract } from './contract-oidc.ts';
import { oidcRegisteredClientsContract } from './contract-oidc-registered-clients.ts';
import { quotasContract } from './contract-quotas.ts';
import { takeoverContract } from './contract-takeover.ts';
import { erasureContract } from './contract-erasure.ts';
import { phoneContract } from './contract-phone.ts';
import { takeoverSessionsContract } from './contract-takeover-sessions.ts';
import { plansContract } from './contract-plans.ts';
import { approvalModesContract } from './contract-approval-modes.ts';
import { operatorsContract } from './contract-operators.ts';
import { passwordManagerContract } from './contract-password-manager.ts';
import { connectionsContract } from './contract-connections.ts';
import { readinessContract } from './contract-readiness.ts';
import { wbaKeysContract } from './contract-wba-keys.ts';
import { receiptsContract } from './contract-receipts.ts';
import { resourceStandingContract } from './contract-resource-standing.ts';
import { revocationSignalContract } from './contract-revocation-signal.ts';
import type { OpenStore } from './use-store.ts';

/** Every contract suite each store must pass (sqlite.test.ts and postgres.test.ts run them all). */
const CONTRACTS: readonly ((name: string, open: OpenStore) => void)[] = [
  storeContract,
  deliveryContract,
  oidcContract,
  oidcRegisteredClientsContract,
  quotasContract,
  emailContract,
  loginThrottleContract,
  keyRevokeContract,
  metricsContract,
  takeoverContract,
  erasureContract,
  accountDataContract,
  phoneContract,
  identityProvidersContract,
  takeoverSessionsContract,
  plansContract,
  approvalModesContract,
  operatorsContract,
  passwordManagerContract,
  connectionsContract,
  readinessContract,
  wbaKeysContract,
  receiptsContract,
  appsContract,
  resourceStandingContract,
  revocationSignalContract,
];

export function storeContracts(name: string, open: OpenStore): void {
  for (const contract of CONTRACTS) contract(name, open);
}
