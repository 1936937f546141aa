// The owner page. Plain script, no build step: served as /assets/app.js under `script-src 'self'`.
// Talks to the JSON API with the session cookie (same-origin fetch), shows the API's `detail`.
'use strict';

(function () {
  const $ = (id) => document.getElementById(id);
  const webauthn = window.SimpleWebAuthnBrowser;

  const POLL_MS = 3000;
  const ACTIVITY_PAGE = 20;
  const CARD_OUTCOME_MS = 8000;

  /** Server time minus this device's time (ms), from the Date header, so "time left" is honest. */
  let clockSkew = 0;
  const serverNow = () => Date.now() + clockSkew;

  // ---------------------------------------------------------------------------------------------
  // Talking to the API

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
    if (status === 503) return 'The service is unavailable for a moment. Try again shortly.';
    return `Request failed (${status}).`;
  }

  async function api(method, path, body) {
    const init = { method, credentials: 'same-origin', headers: { accept: 'application/json' } };
    if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(path, init);
    } catch {
      throw Object.assign(new Error('No connection to the service. Check your network and try again.'), { status: 0 });
    }
    const date = Date.parse(res.headers.get('date') || '');
    if (!Number.isNaN(date)) clockSkew = date - Date.now();
    const text = await res.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch { data = null; }
    if (!res.ok) {
      const err = new Error(describe(res.status, data));
      err.status = res.status;
      err.nextStep = data && typeof data.next_step === 'string' ? data.next_step : undefined;
      throw err;
    }
    return data;
  }

  /** An error the page raises itself, shown like an API error. */
  const userError = (text) => Object.assign(new Error(text), { status: 400 });

  /** WebAuthn errors named for people: a cancelled prompt is the common case. */
  function passkeyError(e) {
    if (e && e.name === 'NotAllowedError') return 'The passkey prompt was cancelled or timed out.';
    if (e && e.name === 'InvalidStateError') return 'This device already has a passkey for this account.';
    return (e && e.message) || String(e);
  }

  const errorText = (e) => (e && e.status !== undefined ? e.message : passkeyError(e));

  /**
   * The 403 of adding or removing a passkey from a password session (it carries `next_step`; the
   * other 403s of the page, cross-site refusals, do not). The page offers a passkey sign-in.
   */
  const needsPasskeySession = (e) => Boolean(e && e.status === 403 && e.nextStep);

  /**
   * After a 401 while signed in: is the session really gone (rather than, say, a refused passkey)?
   * If so the page signs out and says why.
   */
  async function sessionEnded(e) {
    if (!(e && e.status === 401 && signedIn)) return false;
    try {
      await api('GET', '/api/me');
      return false;
    } catch (again) {
      if (!(again && again.status === 401)) return false;
      signedOut('Your session ended. Sign in again.');
      return true;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Small DOM helpers

  /** `el('p', {className: 'x', text: 'y'}, child, ...)`: text is always set as text, never as HTML. */
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null) continue;
      if (key === 'text') node.textContent = value;
      else if (key === 'className' || key === 'type' || key === 'value' || key === 'checked' || key === 'hidden' || key === 'disabled') node[key] = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
    return node;
  }

  let messageTimer = null;

  /** The page-wide message; good news fades after a while, errors stay until the next action. */
  function show(text, kind) {
    const node = $('message');
    node.textContent = text;
    node.className = kind || '';
    node.hidden = !text;
    clearTimeout(messageTimer);
    if (text && kind === 'ok') messageTimer = setTimeout(() => { node.hidden = true; }, 15000);
    if (text) node.scrollIntoView({ block: 'nearest' });
  }

  /** Runs `work` with the button disabled (and its label changed while it runs) and any error shown. */
  async function busy(button, work, runningLabel) {
    const label = button.textContent;
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
    if (runningLabel) button.textContent = runningLabel;
    show('');
    try {
      await work();
    } catch (e) {
      if (await sessionEnded(e)) return;
      if (needsPasskeySession(e)) {
        askForPasskeySession();
        return;
      }
      show(errorText(e), 'error');
    } finally {
      button.disabled = false;
      button.removeAttribute('aria-busy');
      if (runningLabel) button.textContent = label;
    }
  }

  function item(title, meta, onRemove, removeLabel) {
    const li = el('li', {}, el('div', {}, el('strong', { text: title }), el('span', { className: 'meta', text: meta })));
    if (onRemove) {
      const button = el('button', { type: 'button', className: 'danger', text: removeLabel, 'aria-label': `${removeLabel} ${title}` });
      button.addEventListener('click', () => busy(button, onRemove, `${removeLabel}…`));
      li.append(button);
    }
    return li;
  }

  function fill(list, items, emptyText) {
    list.replaceChildren(...(items.length ? items : [el('li', { className: 'empty', text: emptyText })]));
  }

  const when = (ts) => (ts ? new Date(ts).toLocaleString() : 'never');

  function timeLeft(expiresAt) {
    const ms = Date.parse(expiresAt) - serverNow();
    if (!(ms > 0)) return { text: 'expired', expired: true, soon: true };
    const s = Math.ceil(ms / 1000);
    const m = Math.floor(s / 60);
    return { text: m > 0 ? `${m} min ${String(s % 60).padStart(2, '0')} s left` : `${s} s left`, expired: false, soon: s <= 60 };
  }

  const USER_INFO_LABELS = { 'user:name': 'your name', 'user:email': 'your email address', 'user:phone': 'your phone number' };
  const userInfoLabel = (name) => (USER_INFO_LABELS[name] ? `${name} (${USER_INFO_LABELS[name]})` : name);

  const confirmed = (text) => window.confirm(text);

  // ---------------------------------------------------------------------------------------------
  // Agents (names are needed by the other sections)

  const agentNames = new Map();
  const agentName = (id, fallback) => agentNames.get(id) || fallback || id || 'an agent';

  async function loadAgents() {
    const agents = await api('GET', '/api/agents');
    for (const a of agents) agentNames.set(a.id, a.name);
    fill($('agents'), agents.map((a) => item(a.name, `${a.id} · ${a.flag} · key ${a.jkt}`, async () => {
      if (!confirmed(`Remove the agent "${a.name}"? Its access to every site ends at once and it cannot ask again.`)) return;
      await api('DELETE', `/api/agents/${encodeURIComponent(a.id)}`);
      show(`Agent "${a.name}" removed. Its access has ended.`, 'ok');
      await Promise.all([loadAgents(), loadMe(), loadActivity()]);
    }, 'Remove')), 'No agents yet.');
    renderGrants(lastGrants, true);
  }

  // ---------------------------------------------------------------------------------------------
  // Waiting for you: one card per open request, kept across refreshes so ticks are not lost.

  /** txn id -> { item, node, state: 'open' | 'busy' | 'done', timeNode, errorNode, buttons } */
  const cards = new Map();

  function cardError(card, text) {
    card.errorNode.textContent = text || '';
    card.errorNode.hidden = !text;
  }

  function setCardBusy(card, on, button, label) {
    card.state = on ? 'busy' : 'open';
    card.node.setAttribute('aria-busy', on ? 'true' : 'false');
    for (const b of card.buttons) b.disabled = on;
    for (const input of card.node.querySelectorAll('input, select')) input.disabled = on;
    if (button) button.textContent = label;
  }

  /** Replaces the card's controls with its outcome, then lets it go. */
  function finishCard(card, text, kind) {
    card.state = 'done';
    card.node.setAttribute('aria-busy', 'false');
    card.node.classList.add('done', kind);
    card.timeNode.hidden = true;
    card.node.replaceChildren(card.node.firstChild, el('p', { className: `outcome ${kind}`, role: 'status', text }));
    setTimeout(() => {
      card.node.remove();
      cards.delete(card.item.id);
      updatePendingEmpty();
    }, CARD_OUTCOME_MS);
  }

  function updatePendingEmpty() {
    const open = [...cards.values()].filter((c) => c.state !== 'done').length;
    $('pending-empty').hidden = cards.size > 0;
    const badge = $('pending-count');
    badge.textContent = String(open);
    badge.hidden = open === 0;
    document.title = open ? `(${open}) Mandate` : 'Mandate';
  }

  function checkboxes(legend, names, label, kind) {
    if (!names.length) return null;
    return el('fieldset', { className: 'choices' },
      el('legend', { text: legend }),
      ...names.map((name) => el('label', { className: 'check' },
        el('input', { type: 'checkbox', checked: true, value: name, 'data-kind': kind }),
        el('span', { className: 'code', text: label(name) }))));
  }

  function limitsControls() {
    const select = el('select', { className: 'limit-expires' },
      el('option', { value: '', text: 'no limit' }),
      el('option', { value: '3600', text: '1 hour' }),
      el('option', { value: '86400', text: '1 day' }),
      el('option', { value: '2592000', text: '30 days' }));
    const uses = el('input', { type: 'number', className: 'limit-uses', min: '1', step: '1', inputmode: 'numeric', placeholder: 'no limit' });
    return el('details', { className: 'limits' },
      el('summary', { text: 'Limits (optional)' }),
      el('label', {}, 'Access ends in ', select),
      el('label', {}, 'Maximum number of uses ', uses));
  }

  function buildCard(p) {
    const agent = p.agent || agentName(p.agent_id);
    const timeNode = el('span', { className: 'time' });
    const errorNode = el('p', { className: 'card-error', role: 'alert', hidden: true });
    const approve = el('button', { type: 'button', className: 'approve', text: 'Approve' });
    const deny = el('button', { type: 'button', className: 'secondary deny', text: 'Deny' });
    let head;
    let body = [];
    if (p.kind === 'stepup') {
      head = el('h3', {}, el('strong', { text: agent }), ' asks you to confirm an action at ', el('span', { className: 'site', text: p.site }));
      body = [el('blockquote', { className: 'action', text: p.action || '' })];
    } else if (p.kind === 'initial') {
      head = el('h3', {}, el('strong', { text: agent }), ' asks for access to ', el('span', { className: 'site', text: p.site }));
      body = [
        checkboxes('It may', p.scopes, (s) => s, 'scope'),
        checkboxes('It may see', p.user_info, userInfoLabel, 'user_info'),
        el('p', { className: 'hint', text: 'Untick anything you do not want to give.' }),
        limitsControls(),
      ];
    } else {
      head = el('h3', {}, el('strong', { text: agent }), ` asks (${p.kind}) at `, el('span', { className: 'site', text: p.site }));
    }
    const node = el('article', { className: `card request ${p.kind}`, 'data-txn': p.id, 'aria-busy': 'false' },
      el('header', {}, head, timeNode),
      ...body,
      errorNode,
      el('div', { className: 'row actions' }, approve, deny));
    const card = { item: p, node, state: 'open', timeNode, errorNode, buttons: [approve, deny] };
    approve.addEventListener('click', () => answer(card, true, approve));
    deny.addEventListener('click', () => answer(card, false, deny));
    tickCard(card);
    return card;
  }

  function tickCard(card) {
    if (card.state === 'done') return;
    const left = timeLeft(card.item.expires_at);
    card.timeNode.textContent = left.text;
    card.timeNode.classList.toggle('soon', left.soon);
    if (left.expired && card.state === 'open') finishCard(card, 'This request expired before you answered. The agent has to ask again.', 'gone');
  }

  /** What the owner chose on an access request's card: narrowed lists and limits. */
  function choices(card) {
    const ticked = (kind) => [...card.node.querySelectorAll(`input[data-kind="${kind}"]`)].filter((i) => i.checked).map((i) => i.value);
    const scopes = ticked('scope');
    if (!scopes.length) throw userError('Keep at least one thing it may do, or deny the request.');
    const out = { scopes, user_info: ticked('user_info') };
    const limits = {};
    const expires = card.node.querySelector('.limit-expires');
    if (expires && expires.value) limits.expires_in = Number(expires.value);
    const uses = card.node.querySelector('.limit-uses');
    if (uses && uses.value.trim() !== '') {
      const n = Number(uses.value);
      if (!Number.isInteger(n) || n < 1) throw userError('Maximum number of uses must be a whole number of at least 1, or empty for no limit.');
      limits.max_uses = n;
    }
    if (Object.keys(limits).length) out.limits = limits;
    return out;
  }

  async function answer(card, approve, button) {
    if (card.state !== 'open') return;
    const p = card.item;
    const label = button.textContent;
    cardError(card, '');
    let body;
    try {
      body = { approve, ...(approve && p.kind === 'initial' ? choices(card) : {}) };
      if (approve && !(webauthn && webauthn.browserSupportsWebAuthn())) throw userError('This browser does not support passkeys, so it cannot approve. Deny, or approve on your phone.');
    } catch (e) {
      return cardError(card, errorText(e));
    }
    setCardBusy(card, true, button, approve ? 'Approving…' : 'Denying…');
    try {
      const txn = encodeURIComponent(p.id);
      if (approve) {
        const { options } = await api('GET', `/api/txn/${txn}/assertion-options`);
        button.textContent = 'Waiting for your passkey…';
        body.assertion = await webauthn.startAuthentication({ optionsJSON: options });
        button.textContent = 'Approving…';
      }
      const { status } = await api('POST', `/api/txn/${txn}/response`, body);
      finishCard(card, outcomeText(p, status, body), status === 'approved' ? 'ok' : 'denied');
      updatePendingEmpty();
      await Promise.all([loadMe(), loadActivity()]);
    } catch (e) {
      if (await sessionEnded(e)) return;
      if (e && e.status === 409 && !/no passkey/i.test(e.message)) {
        finishCard(card, /removed or revoked/i.test(e.message) ? e.message : 'Already answered on another device, or expired.', 'gone');
        updatePendingEmpty();
        return;
      }
      setCardBusy(card, false, button, label);
      cardError(card, e && e.status === 409 ? `${e.message}\nAdd a passkey under "Passkeys" below, then approve.` : errorText(e));
    }
  }

  function outcomeText(p, status, body) {
    const agent = p.agent || agentName(p.agent_id);
    if (status !== 'approved') return `Denied. ${agent} gets nothing from ${p.site}.`;
    if (p.kind === 'stepup') return `Approved: ${agent} may "${p.action}" at ${p.site}, once.`;
    const parts = [`Approved. ${agent} may ${body.scopes.join(', ')} at ${p.site}`];
    if (body.user_info && body.user_info.length) parts.push(` and see ${body.user_info.join(', ')}`);
    return `${parts.join('')}.`;
  }

  function renderPending(list) {
    const listed = new Set(list.map((p) => p.id));
    for (const card of cards.values()) {
      if (!listed.has(card.item.id) && card.state === 'open') finishCard(card, 'No longer waiting: answered on another device, or expired.', 'gone');
    }
    // The list is newest first; what arrived since the last look goes on top, in that order.
    const arrived = [];
    for (const p of list) {
      if (cards.has(p.id)) continue;
      const card = buildCard(p);
      cards.set(p.id, card);
      arrived.push(card.node);
    }
    if (arrived.length) $('pending').prepend(...arrived);
    updatePendingEmpty();
  }

  // ---------------------------------------------------------------------------------------------
  // Access you have given

  let lastGrants = [];
  let grantsKey = '';

  function renderGrants(grants, force) {
    lastGrants = grants;
    const key = JSON.stringify(grants.map((g) => [g.id, g.scopes, g.user_info, g.expires_at, g.uses_left, g.agent_name || agentName(g.agent_id)]));
    if (!force && key === grantsKey) return;
    grantsKey = key;
    $('grants-empty').hidden = grants.length > 0;
    $('grants').replaceChildren(...grants.map(grantCard));
  }

  function grantCard(g) {
    const agent = g.agent_name || agentName(g.agent_id);
    const errorNode = el('p', { className: 'card-error', role: 'alert', hidden: true });
    const fail = async (e) => {
      if (await sessionEnded(e)) return;
      errorNode.textContent = errorText(e);
      errorNode.hidden = false;
    };
    const run = async (button, label, work) => {
      const old = button.textContent;
      for (const b of node.querySelectorAll('button')) b.disabled = true;
      node.setAttribute('aria-busy', 'true');
      button.textContent = label;
      errorNode.hidden = true;
      try {
        await work();
      } catch (e) {
        await fail(e);
      } finally {
        for (const b of node.querySelectorAll('button')) b.disabled = false;
        node.setAttribute('aria-busy', 'false');
        button.textContent = old;
      }
    };

    const infoList = g.user_info.length
      ? el('ul', { className: 'fields' }, ...g.user_info.map((name) => {
        const remove = el('button', { type: 'button', className: 'link danger-link', text: 'Remove', 'aria-label': `Remove ${name} from ${agent} at ${g.site}` });
        remove.addEventListener('click', () => {
          if (!confirmed(`Stop giving ${userInfoLabel(name)} to ${agent} at ${g.site}? To give it again, the agent has to ask again.`)) return;
          run(remove, 'Removing…', async () => {
            await api('PATCH', `/api/grants/${encodeURIComponent(g.id)}/user-info`, { user_info: g.user_info.filter((n) => n !== name) });
            show(`${name} is no longer given to ${agent} at ${g.site}.`, 'ok');
            await Promise.all([loadMe(), loadActivity()]);
          });
        });
        return el('li', {}, el('span', { className: 'code', text: userInfoLabel(name) }), remove);
      }))
      : el('p', { className: 'meta', text: 'No information about you.' });

    const revoke = el('button', { type: 'button', className: 'danger revoke', text: 'Revoke', 'aria-label': `Revoke ${agent} at ${g.site}` });
    revoke.addEventListener('click', () => {
      if (!confirmed(`Revoke ${agent}'s access to ${g.site}? It stops working at once.`)) return;
      run(revoke, 'Revoking…', async () => {
        await api('POST', `/api/grants/${encodeURIComponent(g.id)}/revoke`);
        show(`${agent}'s access to ${g.site} is revoked.`, 'ok');
        await Promise.all([loadMe(), loadActivity()]);
      });
    });

    const limits = [`given ${when(g.created_at)}`, g.expires_at ? `ends ${when(g.expires_at)}` : 'no end date', g.uses_left === null ? 'unlimited uses' : `${g.uses_left} use${g.uses_left === 1 ? '' : 's'} left`];
    const node = el('article', { className: 'card grant', 'data-grant': g.id, 'aria-busy': 'false' },
      el('header', {}, el('h3', {}, el('strong', { text: agent }), ' at ', el('span', { className: 'site', text: g.site }))),
      el('p', {}, 'May: ', ...g.scopes.map((s) => el('span', { className: 'code chip', text: s }))),
      el('div', {}, el('span', { text: 'May see:' }), infoList),
      el('p', { className: 'meta', text: limits.join(' · ') }),
      errorNode,
      el('div', { className: 'row actions' }, revoke));
    return node;
  }

  // ---------------------------------------------------------------------------------------------
  // Activity, newest first, paged with `before` = `next_before`

  let activityItems = [];
  let activityNext = null;

  function duration(sec) {
    const units = [[86400, 'day'], [3600, 'hour'], [60, 'minute']];
    for (const [size, name] of units) {
      if (sec >= size && sec % size === 0) return `${sec / size} ${name}${sec === size ? '' : 's'}`;
    }
    return `${sec} s`;
  }

  const quoted = (v) => (typeof v === 'string' ? `"${v}"` : '');
  const listText = (v) => (Array.isArray(v) && v.length ? v.join(', ') : 'nothing');

  function activityText(a) {
    const d = a.detail || {};
    const who = a.agent_name || agentName(a.agent_id, d.name);
    const at = a.site ? ` at ${a.site}` : '';
    switch (a.action) {
      case 'request.created': return [`${who} asked for access${at}`, `${listText(d.scopes)}; about you: ${listText(d.user_info)}`];
      case 'request.approved': {
        const l = d.limits || {};
        const lim = [l.expires_in ? `ends after ${duration(l.expires_in)}` : '', l.max_uses ? `${l.max_uses} uses` : ''].filter(Boolean).join(', ');
        return [`You approved ${who}${at}`, `${listText(d.scopes)}; about you: ${listText(d.user_info)}${lim ? `; ${lim}` : ''}`];
      }
      case 'request.denied': return [`You denied ${who}${at}`, listText(d.scopes)];
      case 'stepup.requested': return [`${who} asked you to confirm ${quoted(d.action)}${at}`, ''];
      case 'stepup.approved': return [`You approved ${quoted(d.action)} for ${who}${at}`, ''];
      case 'stepup.denied': return [`You denied ${quoted(d.action)} for ${who}${at}`, ''];
      case 'stepup.delivered': return [`${who} collected your confirmation of ${quoted(d.action)}`, a.site || ''];
      case 'stepup.used': return [`${a.site || 'A site'} accepted your confirmation for ${who}`, listText(d.actions)];
      case 'pass.issued': return [`${who} got a pass${at}`, d.uses_left === null || d.uses_left === undefined ? '' : `${d.uses_left} uses left`];
      case 'grant.revoked': return [`You revoked ${who}'s access${at}`, ''];
      case 'grant.user_info_narrowed': return [`You narrowed what ${who} may see${at}`, `now: ${listText(d.to)}`];
      case 'agent.created': return [`You added the agent ${who}`, ''];
      case 'agent.removed': return [`You removed the agent ${who}`, ''];
      case 'agent.flagged': return [`You marked ${who} as ${d.flag}`, ''];
      case 'agent.note': return [`Note from ${who}${d.title ? `: ${d.title}` : ''}`, typeof d.text === 'string' ? d.text : ''];
      case 'agent.status': return [`${who}${at}: ${typeof d.status === 'string' ? d.status : 'status'}`, ''];
      case 'report.received': return [`${a.site || 'A site'} reported ${who}: ${d.kind}`, typeof d.detail === 'string' ? d.detail : ''];
      default: return [`${a.action}${a.agent_id ? ` · ${who}` : ''}${at}`, ''];
    }
  }

  function renderActivity() {
    fill($('activity'), activityItems.map((a) => {
      const [title, extra] = activityText(a);
      const li = el('li', { 'data-action': a.action, 'data-seq': String(a.seq) },
        el('div', {}, el('strong', { text: title }), el('span', { className: 'meta', text: [extra, when(a.created_at)].filter(Boolean).join(' · ') })));
      return li;
    }), 'Nothing has happened yet.');
    $('activity-more').hidden = activityNext === null;
  }

  /** The newest page, merged in front of what is shown (or replacing it when a gap could open). */
  async function loadActivity() {
    const page = await api('GET', `/api/activity?limit=${ACTIVITY_PAGE}`);
    const top = activityItems.length ? activityItems[0].seq : null;
    if (top === null || (page.next_before !== null && page.items.every((a) => a.seq > top))) {
      activityItems = page.items;
      activityNext = page.next_before;
    } else {
      const newer = page.items.filter((a) => a.seq > top);
      if (!newer.length) return;
      activityItems = newer.concat(activityItems);
    }
    renderActivity();
  }

  $('activity-more').addEventListener('click', () => {
    const button = $('activity-more');
    busy(button, async () => {
      if (activityNext === null) return;
      const page = await api('GET', `/api/activity?limit=${ACTIVITY_PAGE}&before=${activityNext}`);
      const last = activityItems.length ? activityItems[activityItems.length - 1].seq : Infinity;
      activityItems = activityItems.concat(page.items.filter((a) => a.seq < last));
      activityNext = page.next_before;
      renderActivity();
    }, 'Loading…');
  });

  // ---------------------------------------------------------------------------------------------
  // Signed in / out, refreshing

  let signedIn = false;
  /** The signed-in owner's email, for a passkey sign-in while signed in (see askForPasskeySession). */
  let myEmail = '';
  let pollTimer = null;
  let tickTimer = null;
  let loadingMe = null;

  /** GET /api/me: pending and grants. One at a time; a 401 signs the page out. */
  function loadMe() {
    if (loadingMe) return loadingMe;
    loadingMe = (async () => {
      try {
        const me = await api('GET', '/api/me');
        myEmail = me.email;
        $('whoami-name').textContent = `${me.display_name} (${me.email})`;
        const unknown = [...me.pending.map((p) => p.agent_id), ...me.grants.map((g) => g.agent_id)].some((id) => id && !agentNames.has(id));
        if (unknown) await loadAgents().catch(() => undefined);
        renderPending(me.pending);
        renderGrants(me.grants);
        return me;
      } finally {
        loadingMe = null;
      }
    })();
    return loadingMe;
  }

  async function poll() {
    if (!signedIn || document.visibilityState !== 'visible') return;
    try {
      await Promise.all([loadMe(), loadActivity()]);
    } catch (e) {
      if (e && e.status === 401) signedOut('Your session ended. Sign in again.');
      // Other failures (network, 503) are retried at the next tick without noise.
    }
  }

  function startPolling() {
    stopPolling();
    pollTimer = setInterval(poll, POLL_MS);
    tickTimer = setInterval(() => { for (const card of cards.values()) tickCard(card); }, 1000);
  }

  function stopPolling() {
    if (pollTimer) clearInterval(pollTimer);
    if (tickTimer) clearInterval(tickTimer);
    pollTimer = null;
    tickTimer = null;
  }

  function setView(on) {
    signedIn = on;
    $('signed-in').hidden = !on;
    $('whoami').hidden = !on;
    $('signed-out').hidden = on;
  }

  function signedOut(text) {
    stopPolling();
    setView(false);
    cards.clear();
    $('pending').replaceChildren();
    agentNames.clear();
    lastGrants = [];
    grantsKey = '';
    activityItems = [];
    activityNext = null;
    myEmail = '';
    $('passkey-reauth').hidden = true;
    document.title = 'Mandate';
    if (text) show(text, 'error');
  }

  /** Shows the signed-in page once GET /api/me answered (so the name is there), or the sign-in forms. */
  async function refresh() {
    try {
      await loadMe();
    } catch (e) {
      signedOut();
      if (e.status !== 401) show(e.message, 'error');
      return;
    }
    setView(true);
    await Promise.all([loadAgents(), loadDevices(), loadActivity()]);
    startPolling();
  }

  /** refresh() with errors shown, for use after sign-in. */
  async function enter() {
    try {
      await refresh();
    } catch (e) {
      show(errorText(e), 'error');
    }
  }

  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') poll();
  });
  window.addEventListener('focus', () => poll());

  // ---------------------------------------------------------------------------------------------
  // Passkeys

  async function loadDevices() {
    const devices = await api('GET', '/api/devices');
    fill($('devices'), devices.map((d) => item(d.name, `added ${when(d.created_at)} · last used ${when(d.last_used_at)}`, async () => {
      if (!confirmed(`Remove the passkey "${d.name}"?`)) return;
      await api('DELETE', `/api/devices/${encodeURIComponent(d.id)}`);
      show(`Passkey "${d.name}" removed.`, 'ok');
      await loadDevices();
    }, 'Remove')), 'No passkeys yet. Add one to approve requests.');
  }

  /** Shown when adding or removing a passkey needs a passkey session (the owner signed in with a password). */
  function askForPasskeySession() {
    show('To add or remove passkeys, sign in with one of your passkeys first.', 'error');
    const box = $('passkey-reauth');
    box.hidden = false;
    box.scrollIntoView({ block: 'nearest' });
  }

  /** A passkey sign-in without leaving the page: the new session (cookie) may then manage passkeys. */
  async function signInWithPasskey() {
    if (noWebAuthn()) return false;
    const { challenge, options } = await api('GET', `/api/webauthn/login/options?email=${encodeURIComponent(myEmail)}`);
    const assertion = await webauthn.startAuthentication({ optionsJSON: options });
    await api('POST', '/api/webauthn/login/verify', { challenge, assertion });
    return true;
  }

  $('passkey-reauth-button').addEventListener('click', () => {
    busy($('passkey-reauth-button'), async () => {
      if (!(await signInWithPasskey())) return;
      $('passkey-reauth').hidden = true;
      await loadDevices();
      show('Signed in with your passkey. You can now add or remove passkeys.', 'ok');
    }, 'Waiting for your passkey…');
  });

  function noWebAuthn() {
    if (webauthn && webauthn.browserSupportsWebAuthn()) return false;
    show('This browser does not support passkeys.', 'error');
    return true;
  }

  // ---------------------------------------------------------------------------------------------
  // Forms

  $('signup-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy($('signup-button'), async () => {
      const body = { email: $('signup-email').value.trim(), password: $('signup-password').value };
      const name = $('signup-name').value.trim();
      if (name) body.display_name = name;
      await api('POST', '/api/users', body);
      $('signup-form').reset();
      await refresh();
      show('Account created. Add a passkey to sign in without a password and to approve requests.', 'ok');
    }, 'Creating…');
  });

  $('signin-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy($('signin-password-button'), async () => {
      const password = $('signin-password').value;
      if (!password) throw userError('Enter your password, or sign in with a passkey.');
      await api('POST', '/api/login', { email: $('signin-email').value.trim(), password });
      $('signin-form').reset();
      await refresh();
    }, 'Signing in…');
  });

  $('signin-passkey-button').addEventListener('click', () => {
    busy($('signin-passkey-button'), async () => {
      if (noWebAuthn()) return;
      const email = $('signin-email').value.trim();
      if (!email) throw userError('Enter your email first.');
      const { challenge, options } = await api('GET', `/api/webauthn/login/options?email=${encodeURIComponent(email)}`);
      const assertion = await webauthn.startAuthentication({ optionsJSON: options });
      await api('POST', '/api/webauthn/login/verify', { challenge, assertion });
      $('signin-form').reset();
      await refresh();
    }, 'Waiting for your passkey…');
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
      $('passkey-reauth').hidden = true;
      await loadDevices();
      show('Passkey added.', 'ok');
    }, 'Waiting for your passkey…');
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
          throw userError('The key looks like JSON but does not parse; paste the whole JWK.');
        }
      } else {
        body.pubkey = key;
      }
      const agent = await api('POST', '/api/agents', body);
      $('agent-form').reset();
      await Promise.all([loadAgents(), loadActivity()]);
      show(`Agent "${agent.name}" created (${agent.id}).`, 'ok');
    }, 'Creating…');
  });

  $('signout').addEventListener('click', () => {
    busy($('signout'), async () => {
      await api('POST', '/api/logout');
      signedOut();
      show('Signed out.', 'ok');
    });
  });

  enter();
})();
