import { PASS_TYP, generateAgentKeyPair, jwkThumbprint } from '@mandate/protocol';
import { randomBytes } from 'node:crypto';
import { seconds, systemClock } from '../../../server/src/clock.ts';
import { SigningKeys } from '../../../server/src/crypto/signing-keys.ts';
import { newId } from '../../../server/src/domain/ids.ts';
import { openSqliteStore } from '../../../server/src/store/sqlite/open.ts';
import type { GrantRecord, Store } from '../../../server/src/store/ports/index.ts';

/**
 * A connected app (decisions §28) in the database of a running server process on SQLite, written
 * beside it as the browser approval at /oidc/authorize stores one: an agent of kind `app` (no key)
 * and a grant per resource (`site` = the resource's host, `resource` kept). And its pass, signed with
 * the service's own key as the token endpoint signs it: `aud` = the resource exactly, bound to a
 * DPoP key of the app's. The server reads both from the shared database like anything it wrote.
 */
export interface ConnectedApp {
  id: string;
  clientId: string;
  grants: GrantRecord[];
}

export class AppDatabase {
  private constructor(private readonly store: Store, private readonly keys: SigningKeys) {}

  static async open(dataDir: string): Promise<AppDatabase> {
    const store = await openSqliteStore(dataDir);
    // The server process made the key on its first start: this only reads it (no encryption secret in these tests).
    const keys = new SigningKeys(store.signingKeys, systemClock, { encryption: null, graceSec: 3600 });
    return new AppDatabase(store, keys);
  }

  async connect(userId: string, app: { clientId: string; name: string; resources: { resource: string; scopes: string[] }[] }): Promise<ConnectedApp> {
    const now = Date.now();
    const { app: stored } = await this.store.agents.createApp({
      id: newId('ag'), userId, name: app.name, kind: 'app', clientId: app.clientId, publicJwk: null, jkt: null, status: 'active', flag: 'ok',
      flagRevSeq: null, createdAt: now, removedAt: null, unblockedAt: null, unblockedRevSeq: null,
    });
    const grants: GrantRecord[] = [];
    for (const { resource, scopes } of app.resources) {
      const grant: GrantRecord = {
        id: newId('gr'), userId, agentId: stored.id, site: new URL(resource).host, resource, scopes, userInfo: [], status: 'active',
        createdAt: now, expiresAt: null, usesLeft: null, refreshHash: null, passesIssued: 0, revokedAt: null, revSeq: null, supersededAt: null,
      };
      await this.store.grants.create(grant);
      grants.push(grant);
    }
    return { id: stored.id, clientId: app.clientId, grants };
  }

  /** A 10-minute pass of the app for one of its grants, as the token endpoint mints it for a client that sent a DPoP proof. */
  async pass(issuer: string, userId: string, app: ConnectedApp, grant: GrantRecord): Promise<string> {
    if (grant.resource === null) throw new Error('an app pass is for a resource');
    const { publicJwk } = await generateAgentKeyPair();
    const jkt = await jwkThumbprint(publicJwk);
    const iat = seconds(Date.now());
    return this.keys.sign({
      iss: issuer, sub: app.id, aud: grant.resource, user: userId, scope: grant.scopes, client_id: app.clientId, cnf: { dpop: jkt, jkt }, type: 'access',
      iat, exp: iat + 600, jti: randomBytes(16).toString('base64url'), grant: grant.id, rev_seq: await this.store.counters.current('rev_seq'),
    }, PASS_TYP);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
