import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite/open.ts';
import { storeContract } from './contract.ts';
import { deliveryContract } from './contract-delivery.ts';
import { oidcContract } from './contract-oidc.ts';
import { metricsContract } from './contract-metrics.ts';
import { loginThrottleContract } from './contract-login-throttle.ts';
import { keyRevokeContract } from './contract-key-revoke.ts';
import { quotasContract } from './contract-quotas.ts';
import { emailContract } from './contract-email.ts';

storeContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mandate-store-'));
  return { store: await openSqliteStore(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

deliveryContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mandate-store-'));
  return { store: await openSqliteStore(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

oidcContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mandate-store-'));
  return { store: await openSqliteStore(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

quotasContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mandate-store-'));
  return { store: await openSqliteStore(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

emailContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mandate-store-'));
  return { store: await openSqliteStore(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

loginThrottleContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mandate-store-'));
  return { store: await openSqliteStore(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

keyRevokeContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mandate-store-'));
  return { store: await openSqliteStore(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

metricsContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mandate-store-'));
  return { store: await openSqliteStore(dir), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});
