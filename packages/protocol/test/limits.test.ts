import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  LIMITS,
  ProtocolError,
  SCOPE_PATTERN,
  VERIFY_ERROR_CODES,
  isValidAction,
  isValidScopeList,
  isVerifyErrorCode,
} from '../src/index.ts';

describe('limits and error codes', () => {
  it('limits match the spec table', () => {
    assert.equal(LIMITS.dpopIatToleranceSec, 120);
    assert.equal(LIMITS.dpopJtiRetentionSec, 250);
    assert.equal(LIMITS.reportPassMaxAgeSec, 604800);
    assert.equal(LIMITS.agentJwtMaxLifetimeSec, 900);
    assert.equal(LIMITS.passLifetimeSec, 600);
    assert.equal(LIMITS.stepupLifetimeSec, 60);
  });

  it('the error code list is exactly decisions §7, plus stepup_wrong_details (§28, §29)', () => {
    assert.deepEqual(
      [...VERIFY_ERROR_CODES],
      'invalid_request invalid_token token_expired wrong_site invalid_dpop dpop_method_mismatch dpop_url_mismatch dpop_key_mismatch dpop_stale dpop_replay agent_revoked grant_revoked stepup_invalid stepup_used_or_expired stepup_wrong_action stepup_wrong_site stepup_wrong_details'.split(' '),
    );
    assert.ok(isVerifyErrorCode('dpop_replay'));
    assert.ok(!isVerifyErrorCode('nope'));
  });

  it('ProtocolError carries code and a readable message', () => {
    const e = new ProtocolError('dpop_stale');
    assert.ok(e instanceof Error);
    assert.equal(e.code, 'dpop_stale');
    assert.equal(e.name, 'ProtocolError');
    assert.match(e.message, /too old/);
    assert.equal(new ProtocolError('invalid_token', 'custom').message, 'custom');
  });

  it('scopes', () => {
    for (const ok of ['list', 'orders:read', 'a.b-c_d', 'x'.repeat(64)]) assert.ok(SCOPE_PATTERN.test(ok), ok);
    for (const bad of ['', 'Orders', 'a b', 'x'.repeat(65), 'é', 'a/b']) assert.ok(!SCOPE_PATTERN.test(bad), bad);
    assert.ok(isValidScopeList(['a', 'b']));
    assert.ok(!isValidScopeList([]));
    assert.ok(!isValidScopeList(Array.from({ length: 21 }, (_, i) => `s${i}`)));
    assert.ok(!isValidScopeList(['ok', 5]));
    assert.ok(!isValidScopeList('list'));
  });

  it('actions: 1..200 printable characters', () => {
    for (const ok of ['delete order 42', 'x', 'x'.repeat(200), 'pay 12 € to Zoë', '支付 100 元', '🙂'.repeat(200)]) {
      assert.ok(isValidAction(ok), ok);
    }
    const bad = ['', 'x'.repeat(201), 'a\nb', 'a\u0000b', 'tab\there', 'pay \u202Eevil', 'zero\u200Bwidth', '   ', 'a\u2028b', '\uD800', 5, null];
    for (const b of bad) assert.ok(!isValidAction(b), JSON.stringify(b));
  });
});
