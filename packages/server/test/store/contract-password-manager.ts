import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentRecord } from '../../src/store/ports/index.ts';
import { type OpenStore, useStore } from './use-store.ts';

let n = 0;
const uniq = (p: string): string => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

/** The storage contract of the password-manager switch (migration 025), on every backend. */
export function passwordManagerContract(name: string, open: OpenStore): void {
  describe(`store contract (password manager): ${name}`, () => {
    const store = useStore(open);
    const agent = (userId: string): AgentRecord => ({
      id: uniq('ag_'), userId, name: 'Bot', kind: 'agent', clientId: null, publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, jkt: uniq('j'),
      status: 'active', flag: 'ok', flagRevSeq: null, createdAt: 5, removedAt: null, unblockedAt: null, unblockedRevSeq: null,
    });

    it('an agent starts off with no browser kind; the switch is per agent; the owner\'s map reads them all at once', async () => {
      const userId = uniq('u_');
      const [ordinary, operatorRun, userRun] = [agent(userId), agent(userId), agent(userId)];
      const stranger = agent(uniq('u_'));
      for (const a of [ordinary, operatorRun, userRun, stranger]) await store.agents.create(a);
      await store.operators.attachAgent(operatorRun.id, { operatorId: 'op_x', connectionId: 'cn_x', browser: 'operator' });
      await store.operators.attachAgent(userRun.id, { operatorId: 'op_x', connectionId: 'cn_x', browser: 'user' });
      assert.deepEqual(await store.agents.passwordManager(ordinary.id), { browser: null, enabled: false });
      assert.deepEqual(await store.agents.passwordManager(operatorRun.id), { browser: 'operator', enabled: false });
      assert.equal(await store.agents.passwordManager('ag_missing'), undefined);

      await store.agents.setPasswordManager(operatorRun.id, true);
      assert.deepEqual(await store.agents.passwordManager(operatorRun.id), { browser: 'operator', enabled: true });
      const all = await store.agents.passwordManagersOfOwner(userId);
      assert.deepEqual(Object.fromEntries(all), {
        [ordinary.id]: { browser: null, enabled: false },
        [operatorRun.id]: { browser: 'operator', enabled: true },
        [userRun.id]: { browser: 'user', enabled: false },
      });
      await store.transaction((repos) => repos.agents.setPasswordManager(operatorRun.id, false));
      assert.deepEqual(await store.agents.passwordManager(operatorRun.id), { browser: 'operator', enabled: false });
    });
  });
}
