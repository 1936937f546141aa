// The owner page. Plain script, no build step: served as /assets/app.js under `script-src 'self'`.
// Talks to the JSON API with the session cookie (same-origin fetch), shows the API's `detail`.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  const webauthn = window.SimpleWebAuthnBrowser;

  /** A readable sentence from an error answer: `detail` text, 422 items, or 429 retry time. */
  function describe(status, body) {
    const detail = body && body.detail;
    if (status === 429) {
      const wait = body && body.retry_after ? ` Try again in ${body.retry_after} s.` : '';
      return `Too many attempts.${wait}`;
    }
    if (typeof detail === 'string') return detail;
    if (Array.isArray(detail)) {
      return detail.map((item) => {
        const loc = Array.isArray(item.loc) ? item.loc.slice(1).join('.') || item.loc.join('.') : '';
        return loc ? `${loc}: ${item.msg}` : String(item.msg);
      }).join('\n');
    }
    return `Request failed (${status}).`;
  }

  async function api(method, path, body) {
    const init = { method, credentials: 'same-origin', headers: { accept: 'application/json' } };
    if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await fetch(path, init);
    const text = await res.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch { data = null; }
    if (!res.ok) {
      const err = new Error(describe(res.status, data));
      err.status = res.status;
      throw err;
    }
    return data;
  }

  function show(text, kind) {
    const el = $('message');
    el.textContent = text;
    el.className = kind || '';
    el.hidden = !text;
    if (text) el.scrollIntoView({ block: 'nearest' });
  }

  /** WebAuthn errors named for people: a cancelled prompt is the common case. */
  function passkeyError(e) {
    if (e && e.name === 'NotAllowedError') return 'The passkey prompt was cancelled or timed out.';
    if (e && e.name === 'InvalidStateError') return 'This device already has a passkey for this account.';
    return (e && e.message) || String(e);
  }

  /** Runs `work` with the button disabled and any error shown. */
  async function busy(button, work) {
    button.disabled = true;
    show('');
    try {
      await work();
    } catch (e) {
      show(e && e.status ? e.message : passkeyError(e), 'error');
    } finally {
      button.disabled = false;
    }
  }

  function item(title, meta, onRemove, removeLabel) {
    const li = document.createElement('li');
    const text = document.createElement('div');
    const strong = document.createElement('strong');
    strong.textContent = title;
    const small = document.createElement('span');
    small.className = 'meta';
    small.textContent = meta;
    text.append(strong, small);
    li.append(text);
    if (onRemove) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'danger';
      button.textContent = removeLabel;
      button.setAttribute('aria-label', `${removeLabel} ${title}`);
      button.addEventListener('click', () => busy(button, onRemove));
      li.append(button);
    }
    return li;
  }

  function fill(list, items, emptyText) {
    list.replaceChildren(...(items.length ? items : [Object.assign(document.createElement('li'), { className: 'empty', textContent: emptyText })]));
  }

  const day = (ts) => (ts ? new Date(ts).toLocaleString() : 'never');

  async function loadDevices() {
    const devices = await api('GET', '/api/devices');
    fill($('devices'), devices.map((d) => item(d.name, `added ${day(d.created_at)} · last used ${day(d.last_used_at)}`, async () => {
      if (!window.confirm(`Remove the passkey "${d.name}"?`)) return;
      await api('DELETE', `/api/devices/${encodeURIComponent(d.id)}`);
      show(`Passkey "${d.name}" removed.`, 'ok');
      await loadDevices();
    }, 'Remove')), 'No passkeys yet.');
  }

  async function loadAgents() {
    const agents = await api('GET', '/api/agents');
    fill($('agents'), agents.map((a) => item(a.name, `${a.id} · ${a.flag} · key ${a.jkt}`)), 'No agents yet.');
  }

  async function refresh() {
    let me = null;
    try {
      me = await api('GET', '/api/me');
    } catch (e) {
      if (e.status !== 401) show(e.message, 'error');
    }
    $('signed-in').hidden = !me;
    $('whoami').hidden = !me;
    $('signed-out').hidden = !!me;
    if (!me) return;
    $('whoami-name').textContent = `${me.display_name} (${me.email})`;
    await Promise.all([loadDevices(), loadAgents()]);
  }

  function noWebAuthn() {
    if (webauthn && webauthn.browserSupportsWebAuthn()) return false;
    show('This browser does not support passkeys.', 'error');
    return true;
  }

  $('signup-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy($('signup-button'), async () => {
      const body = { email: $('signup-email').value.trim(), password: $('signup-password').value };
      const name = $('signup-name').value.trim();
      if (name) body.display_name = name;
      await api('POST', '/api/users', body);
      $('signup-form').reset();
      await refresh();
      show('Account created. Add a passkey to sign in without a password.', 'ok');
    });
  });

  $('signin-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy($('signin-password-button'), async () => {
      const password = $('signin-password').value;
      if (!password) throw Object.assign(new Error('Enter your password, or sign in with a passkey.'), { status: 400 });
      await api('POST', '/api/login', { email: $('signin-email').value.trim(), password });
      $('signin-form').reset();
      await refresh();
    });
  });

  $('signin-passkey-button').addEventListener('click', () => {
    busy($('signin-passkey-button'), async () => {
      if (noWebAuthn()) return;
      const email = $('signin-email').value.trim();
      if (!email) throw Object.assign(new Error('Enter your email first.'), { status: 400 });
      const { challenge, options } = await api('GET', `/api/webauthn/login/options?email=${encodeURIComponent(email)}`);
      const assertion = await webauthn.startAuthentication({ optionsJSON: options });
      await api('POST', '/api/webauthn/login/verify', { challenge, assertion });
      $('signin-form').reset();
      await refresh();
    });
  });

  $('passkey-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy($('passkey-add-button'), async () => {
      if (noWebAuthn()) return;
      const { challenge, options } = await api('GET', '/api/webauthn/register/options');
      const attestation = await webauthn.startRegistration({ optionsJSON: options });
      const body = { challenge, attestation };
      const name = $('passkey-name').value.trim();
      if (name) body.name = name;
      await api('POST', '/api/webauthn/register/verify', body);
      $('passkey-form').reset();
      await loadDevices();
      show('Passkey added.', 'ok');
    });
  });

  $('agent-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy($('agent-create-button'), async () => {
      const name = $('agent-name').value.trim();
      const key = $('agent-key').value.trim();
      const body = { name };
      if (key.startsWith('{')) {
        try {
          body.jwk = JSON.parse(key);
        } catch {
          throw Object.assign(new Error('The key looks like JSON but does not parse; paste the whole JWK.'), { status: 400 });
        }
      } else {
        body.pubkey = key;
      }
      const agent = await api('POST', '/api/agents', body);
      $('agent-form').reset();
      await loadAgents();
      show(`Agent "${agent.name}" created (${agent.id}).`, 'ok');
    });
  });

  $('signout').addEventListener('click', () => {
    busy($('signout'), async () => {
      await api('POST', '/api/logout');
      show('Signed out.', 'ok');
      await refresh();
    });
  });

  refresh();
})();
