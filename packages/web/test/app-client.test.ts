import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, describe as describeError } from '../src/app/client/api.ts';
import { errorText, needsPasskeySession } from '../src/app/client/errors.ts';
import { duration } from '../src/app/client/format.ts';
import { keyBody } from '../src/app/client/views/agent-form.ts';
import { ACTION_FILTERS, activityText } from '../src/app/client/views/activity-text.ts';
import type { ActivityItem } from '../src/app/client/types.ts';
import { returnTarget, signInLink } from '../src/app/client/return-to.ts';
import { ACTIVITY_ACTIONS } from '../../server/src/domain/activity/activity.ts';

// The app's pure rules, without a browser: error sentences, the pasted-key check, activity lines.

describe('error answers become sentences that say what to do', () => {
  test('the server detail is kept, as a sentence', () => {
    assert.equal(describeError(400, { detail: 'name must be 1 to 100 characters' }, null).message, 'Name must be 1 to 100 characters.');
    assert.equal(describeError(409, { detail: 'request is not pending (it is denied)' }, null).message, 'Request is not pending (it is denied).');
  });

  test('429 says how long to wait, from the body or the Retry-After header', () => {
    assert.equal(describeError(429, { detail: 'rate limit exceeded', retry_after: 42 }, null).message, 'Too many attempts. Wait 42 s and try again.');
    assert.equal(describeError(429, null, '7').message, 'Too many attempts. Wait 7 s and try again.');
    assert.equal(describeError(429, null, null).message, 'Too many attempts. Wait a moment and try again.');
  });

  test('422 lists the fields and asks for a correction', () => {
    const { message } = describeError(422, { detail: [{ loc: ['body', 'email'], msg: 'must match format "email"', type: 'format' }] }, null);
    assert.equal(message, 'email: must match format "email"\nCorrect this and try again.');
  });

  test('a 5xx or a body without detail never shows raw server text', () => {
    assert.equal(describeError(503, { detail: 'service unavailable' }, null).message, 'The service is unavailable for a moment. Try again shortly.');
    assert.equal(describeError(500, null, null).message, 'The service is unavailable for a moment. Try again shortly.');
    assert.equal(describeError(418, null, null).message, 'The request failed (418). Reload the page and try again.');
  });

  test('a 404 says it may be gone; a cross-site 403 says to reload; a 403 with next_step is left to the app', () => {
    assert.match(describeError(404, { detail: 'grant not found' }, null).message, /^Grant not found\. It may have been removed meanwhile/);
    assert.match(describeError(403, { detail: 'cross-site request refused' }, null).message, /Reload the page and try again\.$/);
    assert.equal(describeError(403, { detail: 'sign in with one of your passkeys to add or remove passkeys', next_step: 'POST /api/webauthn/login/verify' }, null).message, 'Sign in with one of your passkeys to add or remove passkeys.');
    assert.equal(needsPasskeySession(new ApiError('x', 403, 'x', 'sign in with a passkey')), true);
    assert.equal(needsPasskeySession(new ApiError('x', 403, 'x')), false);
  });

  test('passkey prompt errors are named for people', () => {
    const cancelled = Object.assign(new Error('The operation either timed out or was not allowed.'), { name: 'NotAllowedError' });
    assert.match(errorText(cancelled), /^The passkey prompt was cancelled or timed out/);
    const wrapped = Object.assign(new Error('wrapped'), { cause: Object.assign(new Error('x'), { name: 'InvalidStateError' }) });
    assert.match(errorText(wrapped), /already holds a passkey/);
  });
});

describe('a pasted agent key', () => {
  const publicJwk = { kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' };

  test('a public JWK is sent as `jwk`, a PEM as `pubkey`', () => {
    assert.deepEqual(keyBody(`  ${JSON.stringify(publicJwk)}\n`), { jwk: publicJwk });
    const pem = '-----BEGIN PUBLIC KEY-----\nMFkw...\n-----END PUBLIC KEY-----';
    assert.deepEqual(keyBody(pem), { pubkey: pem });
  });

  test('a private key is refused before it leaves the device', () => {
    assert.throws(() => keyBody(JSON.stringify({ ...publicJwk, d: 'secret' })), (e: unknown) => e instanceof ApiError && /private key/.test(e.message));
    assert.throws(() => keyBody('-----BEGIN PRIVATE KEY-----\nMIGH...\n-----END PRIVATE KEY-----'), /private key/);
    assert.throws(() => keyBody('-----BEGIN EC PRIVATE KEY-----\nMHc...\n-----END EC PRIVATE KEY-----'), /private key/);
  });

  test('nothing, broken JSON or a JSON array get a message that says what to paste', () => {
    assert.throws(() => keyBody('   '), /Paste the agent's public key/);
    assert.throws(() => keyBody('{"kty":"EC",'), /not complete/);
    assert.throws(() => keyBody('[1,2]'), /PEM|JWK/);
  });
});

describe('activity lines', () => {
  const item = (action: string, detail: Record<string, unknown> = {}, site: string | null = 'shop.example'): ActivityItem =>
    ({ seq: 1, action, agent_id: 'ag_x', agent_name: 'shopper', site, detail, created_at: '2026-01-01T00:00:00.000Z' });

  test('every action the filter offers has its own sentence', () => {
    for (const [action] of ACTION_FILTERS) {
      const [title] = activityText(item(action));
      assert.ok(!title.startsWith(action), `${action} has a sentence: ${title}`);
    }
  });

  test('every action the service records is offered as a filter and worded', () => {
    const offered = new Set(ACTION_FILTERS.map(([action]) => action));
    for (const action of ACTIVITY_ACTIONS) {
      assert.ok(offered.has(action), `${action} is in the filter`);
      assert.ok(!activityText(item(action))[0].startsWith(action), `${action} has a sentence`);
    }
  });

  test('approvals show what was given and the limits', () => {
    const [title, extra] = activityText(item('request.approved', { scopes: ['list'], user_info: ['user:email'], limits: { expires_in: 86400, max_uses: 5 } }));
    assert.equal(title, 'You approved shopper at shop.example');
    assert.equal(extra, 'list; about you: user:email; ends after 1 day, 5 passes');
  });

  test('an approval that left a receipt says so (decisions §29)', () => {
    assert.deepEqual(activityText(item('stepup.approved', { action: 'checkout', receipt: true })), ['You approved "checkout" for shopper at shop.example', 'Receipt kept: proof that your passkey approved exactly this']);
    assert.deepEqual(activityText(item('agent_approval.approved', { action: 'send_email', receipt: true })), ['You approved "send_email" for shopper at shop.example', 'Receipt kept: proof that your passkey approved exactly this']);
    assert.equal(activityText(item('stepup.approved', { action: 'checkout' }))[1], '');
  });

  test('a site step-up: the site asked and collected, for the agent', () => {
    assert.deepEqual(activityText(item('stepup.requested', { action: 'transfer', filed_by: 'site' })), ['shop.example asked you to confirm "transfer" for shopper', '']);
    assert.deepEqual(activityText(item('stepup.requested', { action: 'transfer' })), ['shopper asked you to confirm "transfer" at shop.example', '']);
    assert.deepEqual(activityText(item('stepup.delivered', { action: 'transfer', filed_by: 'site' })), ['shop.example collected your confirmation of "transfer" for shopper', '']);
  });

  test('operator connections: who added or removed an agent, the limit and how a connection ended', () => {
    assert.deepEqual(activityText(item('agent.created', { name: 'shopper', operator: 'Acme agents', connection_id: 'cn_1' }, null)), ['"Acme agents" added the agent shopper', 'an operator you connected']);
    assert.deepEqual(activityText(item('agent.created', { name: 'shopper' }, null)), ['You added the agent shopper', '']);
    assert.equal(activityText(item('agent.removed', { by: 'operator', operator: 'Acme agents' }, null))[0], '"Acme agents" removed the agent shopper');
    assert.equal(activityText(item('agent.removed', { reason: 'owner_disconnected' }, null))[0], 'shopper was removed: you disconnected its operator');
    assert.equal(activityText(item('agent.removed', { reason: 'operator_ended' }, null))[0], 'shopper was removed: its operator ended the connection');
    assert.equal(activityText(item('agent.removed', {}, null))[0], 'You deleted the agent shopper');
    assert.deepEqual(activityText(item('operator.connection_limit', { max_agents: 1, suspended: ['ag_2'], lifted: [] }, null)), ['You set an operator\'s agent limit to 1', '1 agent suspended']);
    assert.deepEqual(activityText(item('operator.connection_limit', { max_agents: 5, suspended: [], lifted: ['ag_2', 'ag_3'] }, null)), ['You set an operator\'s agent limit to 5', '2 agents working again']);
    assert.deepEqual(activityText(item('operator.connection_ended', { name: 'Acme agents', reason: 'owner_disconnected', agents: 2 }, null)), ['You disconnected "Acme agents"', '2 agents removed and signed out of every site']);
    assert.deepEqual(activityText(item('operator.connection_ended', { name: 'Acme agents', reason: 'operator_ended', agents: 0 }, null)), ['"Acme agents" ended its connection', '']);
    assert.match(activityText(item('operator.connection_ended', { name: 'Acme agents', reason: 'code_reused', agents: 1 }, null))[0], /used twice/);
  });

  test('recovery: a wrong try says the tries left; a recovery names the providers it unlinked', () => {
    assert.deepEqual(activityText(item('recovery.failed', { attempts_left: 3 }, null)), ['A recovery try failed', '3 tries left for that recovery; not you? Your account is safe without a recovery code']);
    assert.deepEqual(activityText(item('recovery.completed', { passkeys_removed: 2, identity_providers_unlinked: ['google'] }, null)), ['Your account was recovered', 'password changed, every other sign-in ended, 2 passkeys removed, google unlinked (link again under Account)']);
    assert.deepEqual(activityText(item('recovery.completed', { passkeys_removed: 1, identity_providers_unlinked: [] }, null))[1], 'password changed, every other sign-in ended, 1 passkey removed');
  });

  test('an unknown action is still shown, plainly', () => {
    assert.deepEqual(activityText(item('something.new')), ['something.new · shopper at shop.example', '']);
  });

  test('durations read as people say them', () => {
    assert.deepEqual([60, 3600, 7200, 86400, 90].map(duration), ['1 minute', '1 hour', '2 hours', '1 day', '90 s']);
  });
});

describe('back to the consent page after signing in', () => {
  test('the consent page\'s sign-in link round-trips to the same path and query', () => {
    const consent = '/connect?operator=op_x&redirect_uri=https%3A%2F%2Facme.example%2Fcb&state=a%26b&code_challenge=c&code_challenge_method=S256';
    const link = signInLink(consent);
    assert.ok(link.startsWith('/app?next='));
    assert.equal(returnTarget(new URL(link, 'https://mandate.example').search), consent);
    // An app's consent page (decisions §28): /oidc/authorize with its query, as the app opened it.
    const authorize = '/oidc/authorize?response_type=code&client_id=https%3A%2F%2Fclaude.example%2Fmeta.json&redirect_uri=http%3A%2F%2F127.0.0.1%3A3000%2Fcb&resource=https%3A%2F%2Fmcp.example%2Fmcp&scope=tools%3Aread&state=s%2Bt&code_challenge=c&code_challenge_method=S256';
    assert.equal(returnTarget(new URL(signInLink(authorize), 'https://mandate.example').search), authorize);
  });

  test('anything but a consent path on this origin is ignored: no open redirect', () => {
    for (const next of ['https://evil.example/connect?x', '//evil.example/connect?x', '/\\evil.example', '/connect', '/app#agents', 'javascript:alert(1)', '/connect?x\\y', '/connect? x', '', '/oidc/authorize', '/oidc/token?x', '/oidc/authorize/wait/t_x?k=1', '//evil.example/oidc/authorize?x', '/oidc/authorize?x y']) {
      assert.equal(returnTarget(`?${new URLSearchParams({ next }).toString()}`), null, next);
    }
    assert.equal(returnTarget(''), null);
    assert.equal(returnTarget('?other=/connect?x'), null);
  });
});
