import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRoute } from '../src/app/client/router.ts';

// The callback of an identity provider lands on /app#<view>[/<txn>]?oauth=… (decisions §15): the
// outcome after `?` must not change which view opens, nor make the fragment unknown.

describe('fragments with an identity-provider outcome', () => {
  test('open the view they name, with its parameter', () => {
    assert.deepEqual(parseRoute('#account?oauth=linked&provider=google'), { view: 'account', param: null });
    assert.deepEqual(parseRoute('#requests/t_abc123?oauth=approved&provider=google'), { view: 'requests', param: 't_abc123' });
    assert.deepEqual(parseRoute('#requests?oauth=refused&reason=not_linked&detail=This+Google+account+is+not+linked'), { view: 'requests', param: null });
  });

  test('plain fragments read as before; unknown ones open the default view', () => {
    assert.deepEqual(parseRoute('#agents'), { view: 'agents', param: null });
    assert.deepEqual(parseRoute('#nosuch?oauth=linked'), { view: 'requests', param: null });
    assert.deepEqual(parseRoute('#requests/t_a b'), { view: 'requests', param: null });
  });
});

describe('taking the outcome out of the address', () => {
  /** Runs takeIdentityReturn at /app<hash>; returns what it read and the address it left. */
  async function take(hash: string) {
    const { takeIdentityReturn } = await import('../src/app/client/views/identity-return.ts');
    let address = `/app${hash}`;
    const g = globalThis as unknown as Record<string, unknown>;
    g['location'] = { pathname: '/app', search: '', hash };
    g['history'] = { replaceState: (_s: unknown, _t: string, url: string) => { address = url; } };
    try {
      return { read: takeIdentityReturn(), address };
    } finally {
      delete g['location'];
      delete g['history'];
    }
  }

  test('an approval leaves the request view without the request (it is answered: nothing to look for)', async () => {
    // With the id left in, the view looked for the card, and a refresh landing after "Approved with
    // Google" replaced it with "That request is no longer waiting" (seen under load in CI).
    assert.deepEqual(await take('#requests/t_abc123?oauth=approved&provider=google'), { read: { outcome: 'approved', provider: 'google', reason: '' }, address: '/app#requests' });
  });

  test('a refusal keeps the request it was about in view; other outcomes keep their view', async () => {
    assert.deepEqual(await take('#requests/t_abc123?oauth=refused&provider=google&reason=wrong_owner'), { read: { outcome: 'refused', provider: 'google', reason: 'wrong_owner' }, address: '/app#requests/t_abc123' });
    assert.equal((await take('#account?oauth=linked&provider=google')).address, '/app#account');
    assert.deepEqual(await take('#requests/t_abc123'), { read: null, address: '/app#requests/t_abc123' });
  });
});

describe('what the app says after a refusal', () => {
  test('every reason the service documents has its own sentence, naming the provider', async () => {
    const { refusalText } = await import('../src/app/client/views/identity-return.ts');
    const reasons = ['unknown_provider', 'rate_limited', 'passkey_session_needed', 'provider_taken', 'session_changed', 'bad_state', 'other_browser', 'access_denied', 'issuer_error', 'invalid_response', 'not_linked', 'linked_elsewhere', 'wrong_owner', 'stale_sign_in', 'not_approved', 'not_started'];
    const fallback = refusalText('no-such-reason', 'Google');
    for (const reason of reasons.filter((r) => r !== 'not_started')) assert.notEqual(refusalText(reason, 'Google'), fallback, reason);
    assert.match(refusalText('access_denied', 'Google'), /^Google answered access_denied/);
    assert.match(refusalText('access_denied', 'the sign-in provider'), /^The sign-in provider answered/);
    assert.match(refusalText('not_linked', 'Google'), /not linked to a Mandate account/);
  });
});
