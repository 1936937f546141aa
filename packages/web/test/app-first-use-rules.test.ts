import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { type DeviceFacts, approvePlace, mayManagePasskeys } from '../src/app/client/device.ts';
import { appAssets } from '../src/app-assets.ts';
import { buildPublicSite } from '../src/public/index.ts';
import { TOKENS_END, sharedTokens } from '../src/public/tokens.ts';

// What a new user trips over, as rules without a browser: where the app says an approval can happen
// before Approve is pressed, and one mark and one palette for the app and the public pages.

describe('before Approve is pressed, the app says where a passkey can answer', () => {
  const base: DeviceFacts = { passkeys: 1, webauthn: true, passkeyHere: false, method: null, platform: true };
  const place = (f: Partial<DeviceFacts>) => approvePlace({ ...base, ...f });

  test('no passkey on the account: add one (or deny), wherever you are', () => {
    assert.equal(place({ passkeys: 0 }), 'no-passkey');
    assert.equal(place({ passkeys: 0, webauthn: false }), 'no-passkey');
  });

  test('a password session on a device that never made or used a passkey: approve on the phone that holds it', () => {
    assert.equal(place({ method: 'password' }), 'elsewhere');
    assert.equal(place({ method: 'password', platform: null }), 'elsewhere');
  });

  test('a device without an authenticator of its own, however signed in (unless a passkey answered here)', () => {
    assert.equal(place({ platform: false }), 'elsewhere');
    assert.equal(place({ platform: false, method: 'passkey' }), 'here', 'the passkey sign-in reached one (a phone the browser talks to)');
  });

  test('a passkey sign-in, or a passkey made or used here, means it answers here: nothing to say', () => {
    assert.equal(place({ method: 'passkey' }), 'here');
    assert.equal(place({ method: 'password', passkeyHere: true }), 'here');
    assert.equal(place({ method: null }), 'here', 'not known: no advice rather than a wrong one');
    assert.equal(place({ passkeys: null, method: 'password' }), 'here', 'devices not loaded yet');
  });

  test('a browser without WebAuthn', () => {
    assert.equal(place({ webauthn: false, method: 'passkey' }), 'unsupported');
  });

  test('adding or removing passkeys: the first by any session, more only with a passkey session (the server rule)', () => {
    assert.equal(mayManagePasskeys(0, 'password'), true);
    assert.equal(mayManagePasskeys(2, 'password'), false);
    assert.equal(mayManagePasskeys(2, 'passkey'), true);
    assert.equal(mayManagePasskeys(2, null), true, 'not known: the form, and the server says no if it must');
  });
});

describe('one mark and one palette for the app and the public pages', () => {
  const app = appAssets();
  const site = buildPublicSite({ baseUrl: 'https://mandate.example' });
  const body = (asset: { body: string | Buffer } | undefined): string => String(asset?.body ?? '');
  const home = body(site.pages.get('/'));
  const linked = (re: RegExp): string => (re.exec(home)?.[1] ?? '').split('?')[0] ?? '';

  test('the public pages show and use as their icon the app\'s shield, not a letter', () => {
    const iconPath = linked(/<link rel="icon" href="([^"]+)"/);
    const icon = body(site.pages.get(iconPath));
    assert.equal(icon, body(app.get('/assets/app/icon.svg')), 'the same SVG as the app (and its PNG icons are drawn from it)');
    const mark = /<a class="brand" href="\/">(.*?)<\/a>/s.exec(home)?.[1] ?? '';
    assert.match(mark, /^<img class="brand-mark" src="\/assets\/public-icon\.svg\?v=[0-9a-f]{12}" alt="" width="32" height="32">Mandate$/);
  });

  test('the public stylesheet begins with the app\'s tokens; neither sheet defines a token again or spells out its colour', () => {
    const tokens = sharedTokens();
    const appCss = body(app.get('/assets/app/app.css'));
    const publicCss = body(site.pages.get(linked(/<link rel="stylesheet" href="([^"]+)"/)));
    assert.ok(appCss.startsWith(tokens) && publicCss.startsWith(tokens), 'both served sheets start with the one tokens block');
    const names = [...tokens.matchAll(/(--[a-z-]+):\s*([^;]+);/g)].map((m) => [m[1] ?? '', (m[2] ?? '').trim().toLowerCase()] as const);
    assert.ok(names.length >= 15, 'colours and type');
    for (const [sheet, css] of [['app.css', appCss], ['public.css', publicCss]] as const) {
      const own = css.slice(tokens.length);
      for (const [name, value] of names) {
        assert.ok(!own.includes(`${name}:`), `${sheet} defines ${name} again`);
        // White stays white (text on the accent); every other token colour is used by name.
        if (value.startsWith('#') && value !== '#fff') assert.ok(!own.toLowerCase().includes(value), `${sheet} spells out ${value} instead of var(${name})`);
      }
    }
    assert.ok(tokens.endsWith(TOKENS_END));
  });

  test('a stylesheet without the tokens block is refused at start, not served half-styled', () => {
    assert.throws(() => sharedTokens(':root { --fg: #000; }'), /must begin with the Mandate tokens block/);
  });
});
