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
