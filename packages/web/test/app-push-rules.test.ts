import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clickUrl, dismissTags, fallbackNotification, notificationFor, parsePush } from '../src/app/worker/push-rules.ts';
import { base64UrlToBytes } from '../src/app/shared/base64url.ts';
import { deviceName } from '../src/app/shared/device-name.ts';
import { parseRoute } from '../src/app/client/router.ts';
import { testResultText } from '../src/app/client/views/push-section.ts';

// The push rules without a browser: what the service worker makes of a payload, where a tap on a
// notification may lead (Chromium's DevTools protocol cannot click a notification, so this is
// where the choice is checked), the routes a notification opens, and the texts of the test button.

const ORIGIN = 'https://mandate.example';
const approval = { type: 'approval', id: 'n_1', title: 'shopper asks for access', body: 'shop.example: list', url: '/app#requests/t_abc', kind: 'access', txn_id: 't_abc', expires_at: '2026-01-01T00:05:00Z' };

describe('a push payload', () => {
  test('an approval becomes a lasting notification tagged with its request, with Approve and Deny', () => {
    const msg = parsePush(JSON.stringify(approval));
    assert.ok(msg);
    const { title, options } = notificationFor(msg, 1234);
    assert.equal(title, 'shopper asks for access');
    assert.equal(options.body, 'shop.example: list');
    assert.equal(options.tag, 't_abc');
    assert.deepEqual(options.data, { url: '/app#requests/t_abc', type: 'approval', id: 'n_1', txn_id: 't_abc' });
    assert.deepEqual(options.actions, [{ action: 'approve', title: 'Approve' }, { action: 'deny', title: 'Deny' }]);
    assert.equal(options.requireInteraction, true);
    assert.equal(options.silent, false);
    assert.equal(options.renotify, false);
    assert.equal(options.timestamp, 1234);
    assert.equal(options.icon, '/icon-192.png');
  });

  test('an approval bound to details shows the summary as written first, then the action line', () => {
    const details = { summary: 'Pay 12.00 EUR\nto ACME <b>now</b>', digest: 'qm0F3pYt2dBzG2lH7mXqG5a6bEw5Jt3xw8Xv6c6Rk1Q' };
    const msg = parsePush(JSON.stringify({ ...approval, kind: 'stepup', title: 'shopper asks to act on shop.example', body: 'pay · approve with your passkey', details }));
    assert.ok(msg);
    assert.deepEqual(msg.details, details);
    assert.equal(notificationFor(msg, 0).options.body, 'Pay 12.00 EUR\nto ACME <b>now</b>\npay · approve with your passkey');
    for (const bad of [{ summary: 'x' }, { summary: 'x'.repeat(501), digest: details.digest }, 'Pay', [details], { summary: 1, digest: details.digest }]) {
      const plain = parsePush(JSON.stringify({ ...approval, details: bad }));
      assert.ok(plain, 'the approval itself is still shown');
      assert.equal(plain.details, undefined, JSON.stringify(bad));
      assert.equal(notificationFor(plain, 0).options.body, approval.body);
    }
  });

  test('quiet hours: an approval marked silent is shown without sound', () => {
    const msg = parsePush(JSON.stringify({ ...approval, silent: true }));
    assert.ok(msg);
    assert.equal(notificationFor(msg, 0).options.silent, true);
  });

  test('a note is tagged with its own id, has no actions and goes away by itself', () => {
    const msg = parsePush(JSON.stringify({ type: 'note', id: 'n_2', title: 'shopper: done', body: 'Ordered.', url: '/app#notifications' }));
    assert.ok(msg);
    const { options } = notificationFor(msg, 0);
    assert.equal(options.tag, 'n_2');
    assert.equal(options.actions, undefined);
    assert.equal(options.requireInteraction, false);
  });

  test('a dismiss closes the request\'s notification (and one tagged with the notification id)', () => {
    const msg = parsePush(JSON.stringify({ type: 'dismiss', id: 'n_1', title: '', body: '', url: '/app', txn_id: 't_abc' }));
    assert.ok(msg);
    assert.deepEqual(dismissTags(msg), ['t_abc', 'n_1']);
  });

  test('anything else is unreadable: not JSON, no data, an unknown type, no id, no title', () => {
    for (const text of [null, '', 'not json', '[]', '42', JSON.stringify({ ...approval, type: 'party' }), JSON.stringify({ ...approval, id: undefined }), JSON.stringify({ ...approval, title: '' })]) {
      assert.equal(parsePush(text), null, String(text));
    }
  });

  test('the fallback for an unreadable push is a quiet notification leading to the inbox', () => {
    const { title, options } = fallbackNotification(0);
    assert.equal(title, 'Mandate');
    assert.match(options.body, /Open Mandate/);
    assert.equal(options.data.url, '/app#notifications');
  });
});

describe('where a tap on a notification leads', () => {
  test('a path of the app on this origin is followed', () => {
    assert.equal(clickUrl({ url: '/app#requests/t_abc' }, ORIGIN), 'https://mandate.example/app#requests/t_abc');
    assert.equal(clickUrl({ url: '/app#notifications' }, ORIGIN), 'https://mandate.example/app#notifications');
    assert.equal(clickUrl({ url: '/app/takeover/tk_1' }, ORIGIN), 'https://mandate.example/app/takeover/tk_1');
  });

  test('another site, another page of this site or no URL lead to the app itself', () => {
    for (const url of ['https://evil.example/app', '//evil.example/app', 'javascript:alert(1)', '/docs', '/api/me', '/application', '', 42, undefined]) {
      assert.equal(clickUrl({ url }, ORIGIN), 'https://mandate.example/app', String(url));
    }
    assert.equal(clickUrl(null, ORIGIN), 'https://mandate.example/app');
  });
});

describe('routes', () => {
  test('#requests/<txn> opens Requests on that request; unknown views open Requests', () => {
    assert.deepEqual(parseRoute('#requests/t_abc'), { view: 'requests', param: 't_abc' });
    assert.deepEqual(parseRoute('#notifications'), { view: 'notifications', param: null });
    assert.deepEqual(parseRoute(''), { view: 'requests', param: null });
    assert.deepEqual(parseRoute('#nowhere'), { view: 'requests', param: null });
    assert.deepEqual(parseRoute('#requests/<b>'), { view: 'requests', param: null });
  });
});

describe('this browser', () => {
  test('the VAPID key decodes from base64url, with or without padding', () => {
    assert.deepEqual([...base64UrlToBytes('BP8A_-8')], [4, 255, 0, 255, 239]);
    assert.deepEqual([...base64UrlToBytes('AQI=')], [1, 2]);
    assert.throws(() => base64UrlToBytes('a+b/'), /base64url/);
  });

  test('devices are named as people know them', () => {
    const ua = {
      android: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
      iphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
      edge: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0',
      firefox: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:127.0) Gecko/20100101 Firefox/127.0',
    };
    assert.equal(deviceName(ua.android), 'Chrome on Android');
    assert.equal(deviceName(ua.iphone), 'Safari on iPhone');
    assert.equal(deviceName(ua.edge), 'Edge on Windows');
    assert.equal(deviceName(ua.firefox), 'Firefox on Mac');
    assert.equal(deviceName('curl/8'), 'Browser');
  });

  test('the test button says how many devices it reached, and how to add one when there is none', () => {
    assert.match(testResultText({ sent: 2, failed: 0 }), /^Sent to 2 devices\./);
    assert.match(testResultText({ sent: 1, failed: 1 }), /^Sent to 1 device\. 1 device could not be reached/);
    assert.match(testResultText({ sent: 0, failed: 0 }), /^No device gets notifications yet\. Turn them on/);
  });
});
