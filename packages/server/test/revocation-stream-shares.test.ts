import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { clientKeys } from '../src/domain/client-address.ts';
import { DEFAULT_EVENTS_OPTIONS, RevocationEvents, type StreamAdmission, type StreamSlot } from '../src/domain/revocation/events.ts';
import type { RevocationSnapshots } from '../src/domain/revocation/snapshot.ts';
import { systemClock } from '../src/clock.ts';

// The shares of a node's revocation event streams (REVOCATION_MAX_STREAMS_PER_ADDRESS, _PER_NETWORK):
// one client address (IPv4, IPv6 /64) and one IPv6 /48 hold at most their share of the node's cap, so
// one party cannot take every stream and leave the other sites polling. `admit` alone, in the domain:
// the HTTP answers (429, 503) against the real server are in revocation-events-cap.test.ts.

/** A hub whose list is never built: admit() reads nothing but its counts. */
function hub(limits: { maxStreams: number; perAddress: number; perNetwork: number }): RevocationEvents {
  const unused = (): never => {
    throw new Error('admit must not read the list');
  };
  const snapshots = { current: unused, sign: unused, body: unused } as unknown as RevocationSnapshots;
  return new RevocationEvents(snapshots, { current: unused }, { subscribe: unused }, unused, systemClock, 'https://mandate.example', {
    ...DEFAULT_EVENTS_OPTIONS,
    maxStreams: limits.maxStreams,
    maxStreamsPerAddress: limits.perAddress,
    maxStreamsPerNetwork: limits.perNetwork,
  });
}

/** The slot of an admission that must have been granted. */
function granted(a: StreamAdmission): StreamSlot {
  assert.ok(a.slot, `refused: ${a.refused}`);
  return a.slot;
}

describe('the shares of the revocation event streams (admit)', () => {
  it('an IPv4 address holds its share; another address still gets a stream', () => {
    const events = hub({ maxStreams: 10, perAddress: 2, perNetwork: 4 });
    const from = (ip: string) => events.admit(clientKeys(ip));
    granted(from('192.0.2.1'));
    granted(from('192.0.2.1'));
    assert.equal(from('192.0.2.1').refused, 'address');
    granted(from('192.0.2.2'));
  });

  it('an IPv4-mapped IPv6 address counts as that IPv4 address, and IPv4 has no network share', () => {
    // A /48 share of 1 would refuse the second stream if IPv4 were counted under a network key.
    const events = hub({ maxStreams: 10, perAddress: 3, perNetwork: 1 });
    granted(events.admit(clientKeys('192.0.2.7')));
    granted(events.admit(clientKeys('::ffff:192.0.2.7')));
    granted(events.admit(clientKeys('::FFFF:c000:207')));
    assert.equal(events.admit(clientKeys('192.0.2.7')).refused, 'address');
  });

  it('IPv6 addresses of one /64, however spelled, share one address share', () => {
    const events = hub({ maxStreams: 10, perAddress: 2, perNetwork: 8 });
    granted(events.admit(clientKeys('2001:db8:a:1::1')));
    granted(events.admit(clientKeys('2001:DB8:A:1:ffff:ffff:ffff:ffff')));
    assert.equal(events.admit(clientKeys('2001:0db8:000a:0001::42')).refused, 'address');
    granted(events.admit(clientKeys('2001:db8:a:2::1')));
  });

  it('the /64s of one /48 share the network share; another /48 is not affected', () => {
    const events = hub({ maxStreams: 20, perAddress: 2, perNetwork: 3 });
    granted(events.admit(clientKeys('2001:db8:b:1::1')));
    granted(events.admit(clientKeys('2001:db8:b:1::2')));
    granted(events.admit(clientKeys('2001:db8:b:2::1')));
    assert.equal(events.admit(clientKeys('2001:db8:b:2::2')).refused, 'network', 'a second /64 with room of its own');
    assert.equal(events.admit(clientKeys('2001:db8:b:ffff::1')).refused, 'network', 'a fresh /64 of the same /48');
    assert.equal(events.admit(clientKeys('2001:db8:b:1::3')).refused, 'address', 'the /64 past its own share is told so');
    granted(events.admit(clientKeys('2001:db8:c:1::1')));
  });

  it('the node cap holds across addresses; a client past its share is told so even when the node is full', () => {
    const events = hub({ maxStreams: 3, perAddress: 2, perNetwork: 4 });
    granted(events.admit(clientKeys('192.0.2.1')));
    granted(events.admit(clientKeys('192.0.2.1')));
    granted(events.admit(clientKeys('192.0.2.2')));
    assert.equal(events.admit(clientKeys('192.0.2.3')).refused, 'node');
    assert.equal(events.admit(clientKeys('192.0.2.1')).refused, 'address');
  });

  it('a slot released twice gives back one place: of the node and of its shares', () => {
    const events = hub({ maxStreams: 3, perAddress: 2, perNetwork: 2 });
    const a = granted(events.admit(clientKeys('2001:db8:d:1::1')));
    granted(events.admit(clientKeys('2001:db8:d:1::2')));
    granted(events.admit(clientKeys('192.0.2.9')));
    a.release();
    a.release();
    granted(events.admit(clientKeys('2001:db8:d:1::3')));
    assert.equal(events.admit(clientKeys('2001:db8:d:1::4')).refused, 'address', 'one place of the address, not two');
    assert.equal(events.admit(clientKeys('2001:db8:d:2::1')).refused, 'network', 'one place of the /48, not two');
    assert.equal(events.admit(clientKeys('192.0.2.10')).refused, 'node', 'one place of the node, not two');
  });

  it('keeps no key once its streams end: many clients come and go, nothing stays', () => {
    const events = hub({ maxStreams: 50, perAddress: 2, perNetwork: 4 });
    for (let round = 0; round < 20; round++) {
      const slots: StreamSlot[] = [];
      for (let i = 0; i < 60; i++) {
        // Each its own address, and each IPv6 one in a /48 of its own.
        const ip = i % 2 ? `198.51.${round}.${i}` : `2001:${(round + 1).toString(16)}:${i.toString(16)}::1`;
        const a = events.admit(clientKeys(ip));
        if (a.slot) slots.push(a.slot);
      }
      assert.equal(slots.length, 50, 'the node cap');
      assert.ok(events.streamHolders <= 100, `at most two keys per slot, got ${events.streamHolders}`);
      for (const s of slots) s.release();
      assert.equal(events.streamHolders, 0, 'every key dropped at zero');
    }
  });

  it('matches a model of the counts under any order of opens and releases (property)', () => {
    const ips = ['192.0.2.1', '::ffff:192.0.2.1', '192.0.2.2', '2001:db8:e:1::1', '2001:db8:e:1::2', '2001:db8:e:2::1', '2001:db8:e:3::1', '2001:db8:f:1::1'];
    const op = fc.oneof(fc.record({ open: fc.constantFrom(...ips) }), fc.record({ release: fc.nat(), twice: fc.boolean() }));
    fc.assert(fc.property(fc.array(op, { maxLength: 80 }), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 6 }), (ops, maxStreams, perAddress, perNetwork) => {
      const events = hub({ maxStreams, perAddress, perNetwork });
      const open: { slot: StreamSlot; address: string; network: string | undefined }[] = [];
      const count = (pick: (o: (typeof open)[number]) => boolean) => open.filter(pick).length;
      for (const o of ops) {
        if ('open' in o) {
          const keys = clientKeys(o.open);
          const expected = count((s) => s.address === keys.address) >= perAddress ? 'address'
            : keys.network !== undefined && count((s) => s.network === keys.network) >= perNetwork ? 'network'
            : open.length >= maxStreams ? 'node' : undefined;
          const a = events.admit(keys);
          assert.equal(a.refused, expected);
          if (a.slot) open.push({ slot: a.slot, ...keys });
        } else if (open.length > 0) {
          const [gone] = open.splice(o.release % open.length, 1);
          gone?.slot.release();
          if (o.twice) gone?.slot.release();
        }
      }
      for (const s of open) s.slot.release();
      assert.equal(events.streamHolders, 0);
    }), { numRuns: 300 });
  });
});
