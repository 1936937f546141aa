import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HttpOwner } from '../../server/test/helpers/over-http.ts';
import { serverWithStore } from '../../server/test/helpers/server-with-store.ts';
import { MandateAgent } from '../src/agent.ts';
import { InvalidInputError, PasswordManagerOffError } from '../src/client/errors.ts';
import type { FetchLike } from '../src/client/http.ts';
import { AgentKey } from '../src/keys/agent-key.ts';
import type { PasswordManager, SecretSummary } from '../src/password-manager.ts';

// The SDK's password-manager refusal (decisions §17) against a real server process: an agent whose
// browser runs on its operator's computers may not list, fill or save secrets until its owner turns
// the password manager on for it. The password manager itself is the agent's own (the service holds
// no secret and has no endpoint for them): here a recording one, to show it is never reached while off.

/** A password manager in memory that records every call it gets. */
class RecordingPasswordManager implements PasswordManager {
  readonly calls: string[] = [];
  private readonly secrets: SecretSummary[] = [];
  async listSecrets(site: string): Promise<SecretSummary[]> {
    this.calls.push(`list ${site}`);
    return this.secrets.filter((s) => s.site === site);
  }
  async fillSecret(site: string, secretId: string): Promise<void> {
    this.calls.push(`fill ${site} ${secretId}`);
  }
  async saveSecret(site: string, secret: { label: string; value: string }): Promise<SecretSummary> {
    this.calls.push(`save ${site} ${secret.label}`);
    const saved = { id: `s${this.secrets.length + 1}`, site, label: secret.label };
    this.secrets.push(saved);
    return saved;
  }
}

const SITE = 'shop.example';

describe('agent SDK: the password-manager refusal against a real service', { timeout: 180_000 }, () => {
  const service = serverWithStore('sqlite', 'mandate-agent-pwm-');
  let owner: HttpOwner;
  let operatorId = '';

  /** An agent made by the owner; with `browser`, tied to the owner's operator in the server's database, as the operator API will make it. */
  async function newAgent(browser?: 'operator' | 'user', opts: { passwordManager?: PasswordManager; fetch?: FetchLike } = {}): Promise<MandateAgent> {
    const node = service.node!;
    owner ??= await HttpOwner.signUp(node, node.baseUrl, { label: 'pwm' });
    if (!operatorId) {
      operatorId = (await owner.ok<{ id: string }>('POST', '/api/operators', { name: 'Acme agents', redirect_uris: ['https://acme.example/cb'], browser: 'operator' })).id;
    }
    const key = await AgentKey.generate();
    const agentId = await owner.createAgent('Shopper', key.publicJwk);
    if (browser) {
      const store = await service.openStore();
      try {
        await store.operators.attachAgent(agentId, { operatorId, connectionId: 'cn_test', browser });
      } finally {
        await store.close();
      }
    }
    return new MandateAgent({ serviceUrl: node.url, agentId, privateKey: key, ...opts });
  }
  const turn = (agent: MandateAgent, enabled: boolean) => owner.ok<{ password_manager: string }>('POST', `/api/agents/${agent.agentId}/password-manager`, { enabled });

  it('while off: listSecrets, fillSecret and saveSecret are refused with PasswordManagerOffError, and the password manager is never called', async () => {
    const pm = new RecordingPasswordManager();
    const agent = await newAgent('operator', { passwordManager: pm });
    assert.equal((await agent.status()).password_manager, 'off');
    const attempts: [string, () => Promise<unknown>][] = [
      ['listSecrets', () => agent.listSecrets(SITE)],
      ['fillSecret', () => agent.fillSecret(SITE, 's1')],
      ['saveSecret', () => agent.saveSecret(SITE, { label: 'me@example.com', value: 'hunter2' })],
    ];
    for (const [fn, attempt] of attempts) {
      await assert.rejects(attempt(), (e: unknown) => {
        assert.ok(e instanceof PasswordManagerOffError, String(e));
        assert.equal(e.code, 'password_manager_off');
        assert.equal(e.refused, fn);
        assert.match(e.detail, /browser runs on its operator's computers/);
        assert.match(e.nextStep ?? '', /requestTakeover/);
        assert.ok(!JSON.stringify(e.toJSON()).includes('hunter2'), 'the secret is not in the error');
        return true;
      });
    }
    assert.deepEqual(pm.calls, []);
  });

  it('the owner turns it on: the calls reach the password manager; off again: refused at the next call', async () => {
    const pm = new RecordingPasswordManager();
    const agent = await newAgent('operator', { passwordManager: pm });
    assert.equal((await turn(agent, true)).password_manager, 'on');
    assert.equal((await agent.status()).password_manager, 'on');
    const saved = await agent.saveSecret('Shop.Example', { label: 'me@example.com', value: 'hunter2' });
    assert.deepEqual(await agent.listSecrets(SITE), [saved]);
    await agent.fillSecret(SITE, saved.id);
    assert.deepEqual(pm.calls, [`save ${SITE} me@example.com`, `list ${SITE}`, `fill ${SITE} ${saved.id}`]);

    assert.equal((await turn(agent, false)).password_manager, 'off');
    await assert.rejects(agent.fillSecret(SITE, saved.id), PasswordManagerOffError);
    assert.equal(pm.calls.length, 3, 'not called after the off');
  });

  it('agents without an operator-run browser are not restricted (not_applicable)', async () => {
    for (const browser of [undefined, 'user'] as const) {
      const pm = new RecordingPasswordManager();
      const agent = await newAgent(browser, { passwordManager: pm });
      assert.equal((await agent.status()).password_manager, 'not_applicable');
      assert.deepEqual(await agent.listSecrets(SITE), []);
      assert.deepEqual(pm.calls, [`list ${SITE}`]);
    }
  });

  it('bad input and a missing password manager are refused before anything is sent', async () => {
    let sent = 0;
    const counting: FetchLike = (input, init) => { sent++; return fetch(input, init); };
    const without = await newAgent('operator', { fetch: counting });
    await assert.rejects(without.listSecrets(SITE), (e: unknown) => e instanceof InvalidInputError && /passwordManager option/.test(e.detail));
    const pm = new RecordingPasswordManager();
    const agent = await newAgent('operator', { passwordManager: pm, fetch: counting });
    await assert.rejects(agent.listSecrets('not a site'), InvalidInputError);
    await assert.rejects(agent.fillSecret(SITE, ''), InvalidInputError);
    await assert.rejects(agent.saveSecret(SITE, { label: '', value: 'x' }), InvalidInputError);
    assert.equal(sent, 0);
    assert.deepEqual(pm.calls, []);
  });
});
