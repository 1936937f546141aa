import type { ServiceSecretsRepo } from '../store/ports/index.ts';
import type { KeyEncryption } from '../crypto/key-encryption.ts';
import type { Clock } from '../clock.ts';
import { type VapidKeys, generateVapidKeys, isValidVapidKeyPair } from './web-push.ts';

const SECRET_NAME = 'vapid';

/**
 * The service's VAPID key pair (decisions §13): from VAPID_PUBLIC_KEY / VAPID_PRIVATE_KEY when set,
 * else generated on the first start and kept in the database like the signing keys (AES-256-GCM
 * under KEY_ENCRYPTION_KEY when it is set; a plaintext pair is encrypted at the next start). Every
 * node of a deployment reads the same pair: browsers subscribed with its public key, and a push
 * service refuses pushes signed by another.
 */
export async function loadVapidKeys(
  fromConfig: VapidKeys | null,
  repo: ServiceSecretsRepo,
  encryption: KeyEncryption | null,
  clock: Clock,
): Promise<VapidKeys> {
  if (fromConfig) {
    if (!isValidVapidKeyPair(fromConfig.publicKey, fromConfig.privateKey)) throw new Error('VAPID_PUBLIC_KEY is not the public key of VAPID_PRIVATE_KEY');
    return fromConfig;
  }
  let stored = await repo.get(SECRET_NAME);
  if (!stored) {
    const json = JSON.stringify(generateVapidKeys());
    stored = await repo.putIfAbsent({ name: SECRET_NAME, value: encryption ? encryption.encrypt(json) : json, encrypted: encryption !== null, createdAt: clock.now() });
  }
  if (stored.encrypted && !encryption) throw new Error('the VAPID keys in the database are encrypted: set KEY_ENCRYPTION_KEY to the secret they were stored with');
  const json = stored.encrypted && encryption ? encryption.decrypt(stored.value) : stored.value;
  if (!stored.encrypted && encryption) await repo.replace(SECRET_NAME, encryption.encrypt(json), true);
  const keys = JSON.parse(json) as VapidKeys;
  if (!isValidVapidKeyPair(keys.publicKey, keys.privateKey)) throw new Error('the VAPID keys in the database are damaged');
  return keys;
}
