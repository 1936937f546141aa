import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { FixedClock } from '../../server/src/clock.ts';
import { MemoryReplayCache, createVerifier, type MandateRequest, type ReplayCacheOption, type Verifier, type VerifyResult } from '../src/index.ts';
import { type AgentWithPass, type Mandate, PUBLIC_BASE, SITE, agentRequest, agentWithPass, quiet, startMandate } from './helpers/mandate.ts';

// Issue 14, item 2: "The site SDK's replay cache can be filled to lock everyone out." Before the
// fix, 100 000 unexpired proof ids made the local verifier answer 503 to every request: one
// self-approved agent sending valid requests locked out every other agent. Here the real verifier
// in local mode, against a real Mandate (passes from its token endpoint), on a shared fake clock;
// the budgets are small so the flood takes seconds, not minutes (the default size: replay-memory.test.ts).

const outcome = (r: VerifyResult): string => (r.ok ? 'ok' : `${r.status} ${r.error}`);

describe('the local verifier when one agent floods the replay cache', () => {
  let m: Mandate;
  let verifiers: Verifier[] = [];
  before(async () => {
    m = await startMandate({ clock: new FixedClock(Date.UTC(2026, 10, 22, 12)) });
  });
  afterEach(() => {
    for (const v of verifiers) v.close();
    verifiers = [];
  });
  after(() => m.close());

  async function verifier(replayCache: ReplayCacheOption): Promise<Verifier> {
    const v = createVerifier({ mode: 'local', serviceUrl: m.url, site: SITE, publicBaseUrl: PUBLIC_BASE, now: () => m.clock.now(), onError: quiet, replayCache });
    verifiers.push(v);
    await v.start();
    return v;
  }

  /** `count` valid requests by `agent`, `perSecond` of them per second of the shared clock; their outcomes. */
  async function flood(v: Verifier, agents: AgentWithPass[], count: number, perSecond: number): Promise<Map<string, number>> {
    const tally = new Map<string, number>();
    for (let i = 0; i < count; i++) {
      if (i > 0 && i % perSecond === 0) m.clock.advance(1000);
      const result = outcome(await v.verify(await agentRequest(m, agents[i % agents.length] as AgentWithPass)));
      tally.set(result, (tally.get(result) ?? 0) + 1);
    }
    return tally;
  }

  it('the attack: 1 500 valid requests from one agent into a cache of 1 000 are all taken, and an honest agent still gets in (was 503)', async () => {
    const cache = new MemoryReplayCache({ maxEntries: 1000 }); // an agent's share: 100
    const v = await verifier(cache);
    const flooder = await agentWithPass(m);
    const honest = await agentWithPass(m);

    const tally = await flood(v, [flooder], 1500, 50);
    assert.deepEqual([...tally], [['ok', 1500]], 'a new, unseen proof is never refused');
    assert.ok(cache.held(flooder.agent.id) <= 100, `the flooder holds ${cache.held(flooder.agent.id)}, its share is 100`);
    assert.equal(outcome(await v.verify(await agentRequest(m, honest))), 'ok', 'the honest agent is not locked out');
    assert.equal(outcome(await v.verify(await agentRequest(m, flooder))), 'ok', "the flooder's own fresh proofs still pass");
  });

  it('a replay of an evicted proof is refused by its agent\'s horizon, a held one as before; only the flooder\'s window narrows', async () => {
    const v = await verifier({ maxEntries: 200, maxEntriesPerAgent: 20 });
    const flooder = await agentWithPass(m);
    const honest = await agentWithPass(m);
    const honestFirst = await agentRequest(m, honest);
    assert.equal(outcome(await v.verify(honestFirst)), 'ok');
    const evicted = await agentRequest(m, flooder);
    assert.equal(outcome(await v.verify(evicted)), 'ok');
    m.clock.advance(1000);
    assert.deepEqual([...(await flood(v, [flooder], 300, 10))], [['ok', 300]]);
    const held = await agentRequest(m, flooder);
    assert.equal(outcome(await v.verify(held)), 'ok');

    const replayed = await v.verify(evicted);
    assert.equal(outcome(replayed), '401 dpop_replay', 'the evicted proof, replayed');
    assert.match(replayed.ok ? '' : replayed.description, /more DPoP proofs than its share of the replay cache.*sign a new proof/);
    assert.equal(outcome(await v.verify(held)), '401 dpop_replay', 'a held proof, replayed');
    assert.equal(outcome(await v.verify(honestFirst)), '401 dpop_replay', "the honest agent's proof is still held");

    const signedAgo = (a: AgentWithPass, sec: number): Promise<MandateRequest> =>
      agentRequest(m, a, { proof: { iat: Math.floor(m.clock.now() / 1000) - sec } });
    assert.equal(outcome(await v.verify(await signedAgo(flooder, 60))), '401 dpop_replay', "the flooder's unseen proof signed 60 s ago: behind its horizon");
    assert.equal(outcome(await v.verify(await signedAgo(honest, 60))), 'ok', "the honest agent's whole 120 s window still stands");
    assert.equal(outcome(await v.verify(await agentRequest(m, flooder))), 'ok', "the flooder's fresh proof passes");
  });

  it('several flooding agents fill the whole cache: the largest holder pays, the honest agent keeps its proofs and its window', async () => {
    const cache = new MemoryReplayCache({ maxEntries: 300, maxEntriesPerAgent: 200 });
    const v = await verifier(cache);
    const flooders = [await agentWithPass(m), await agentWithPass(m)];
    const honest = await agentWithPass(m);
    const honestSent: MandateRequest[] = [];
    for (let round = 0; round < 6; round++) {
      const request = await agentRequest(m, honest);
      assert.equal(outcome(await v.verify(request)), 'ok');
      honestSent.push(request);
      assert.deepEqual([...(await flood(v, flooders, 200, 20))], [['ok', 200]], `round ${round}`);
    }
    assert.equal(cache.size, 300, 'the cache is full');
    assert.equal(cache.held(honest.agent.id), 6, 'none of the honest proofs was evicted');
    for (const request of honestSent) assert.equal(outcome(await v.verify(request)), '401 dpop_replay');
    const old = await agentRequest(m, honest, { proof: { iat: Math.floor(m.clock.now() / 1000) - 110 } });
    assert.equal(outcome(await v.verify(old)), 'ok', 'an unseen honest proof at the edge of the window');
  });

  it('the budget is the replayCache option; a bad one fails when the verifier is created', async () => {
    assert.throws(
      () => createVerifier({ mode: 'local', serviceUrl: m.url, site: SITE, replayCache: { maxEntries: 0 } }),
      /replayCache\.maxEntries must be a positive integer, not 0/,
    );
    const v = await verifier({ maxEntries: 50 });
    const a = await agentWithPass(m);
    const b = await agentWithPass(m);
    assert.deepEqual([...(await flood(v, [a, b], 120, 4))], [['ok', 120]]);
  });
});
