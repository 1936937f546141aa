/**
 * The sections of the data export (export.ts), one small function each, in the order they appear.
 * Each picks its fields one by one: no hash (password, session, refresh token, client secret), no
 * secret (push subscription keys, FCM tokens, push endpoints, link tokens), nothing of another person.
 */
import { type ExportContext, type ExportSection, iso, paged } from './export.ts';
import { storedClientName } from '../oidc/client-names.ts';

const PAGE = 200;
/**
 * Connections a person can have made: one live per operator, and each ended one is a consent the
 * person gave by hand with a passkey (at most 20 starts a minute), so this is far beyond any account.
 */
const CONNECTIONS_MAX = 10_000;

const list = (name: string, read: (ctx: ExportContext) => AsyncIterable<unknown>): ExportSection => ({ name, kind: 'list', read });
const value = (name: string, read: (ctx: ExportContext) => Promise<unknown>): ExportSection => ({ name, kind: 'value', read });

export const profileSection = value('profile', async ({ user, role }) => ({
  id: user.id,
  email: user.email,
  email_verified: user.emailVerified,
  display_name: user.displayName,
  phone: user.phone,
  phone_verified: user.phoneVerified,
  role,
  has_password: user.passwordHash !== '',
  created_at: iso(user.createdAt),
}));

export const notificationSettingsSection = value('notification_settings', async ({ user, store }) => {
  const s = await store.notifySettings.get(user.id);
  return s ? { approvals: s.approvals, notes: s.notes, session_notices: s.sessionNotices, quiet_hours: s.quietHours, updated_at: iso(s.updatedAt) } : null;
});

export const passkeysSection = list('passkeys', async function* ({ user, store }) {
  for (const p of await store.passkeys.listForUser(user.id)) {
    yield { id: p.id, name: p.name, transports: p.transports, created_at: iso(p.createdAt), last_used_at: iso(p.lastUsedAt) };
  }
});

/** Push devices without their address (a web-push endpoint is a capability; an FCM token a secret) or keys. */
export const devicesSection = list('devices', async function* ({ user, store }) {
  for (const d of await store.pushDevices.listForUser(user.id)) {
    let service: string | null = d.kind === 'fcm' ? 'fcm' : null;
    if (d.kind === 'webpush') {
      try {
        service = new URL(d.address).host;
      } catch {
        service = null;
      }
    }
    yield { id: d.id, kind: d.kind, name: d.name, push_service: service, created_at: iso(d.createdAt), last_used_at: iso(d.lastUsedAt) };
  }
});

/** Agents with their public keys, removed ones too. */
export const agentsSection = list('agents', async function* ({ user, store }) {
  for (const a of await store.agents.listForUser(user.id, true)) {
    yield { id: a.id, name: a.name, status: a.status, flag: a.flag, public_jwk: a.publicJwk, created_at: iso(a.createdAt), removed_at: iso(a.removedAt) };
  }
});

/** Each agent's approval modes (decisions §19): its default (`*`) and per-site rows. */
export const approvalModesSection = list('approval_modes', async function* ({ user, store }) {
  for (const a of await store.agents.listForUser(user.id, true)) {
    for (const m of await store.approvalModes.list(a.id)) yield { agent_id: m.agentId, site: m.site, mode: m.mode, hourly_limit: m.hourlyLimit };
  }
});

/** Plans (decisions §20) with their steps; never the digests of the agent's texts (hashes). */
export const plansSection = list('plans', async function* ({ user, store }) {
  for (const p of await store.plans.list({ userId: user.id }, 0, 10_000)) {
    yield {
      id: p.id, agent_id: p.agentId, title: p.title, status: p.status, start_at: iso(p.startAt), end_at: iso(p.endAt), created_at: iso(p.createdAt), decided_at: iso(p.decidedAt),
      steps: p.steps.map((st) => ({ id: st.id, url: st.url, path: st.path, button: st.button, category: st.category, uses: st.uses, uses_left: st.usesLeft, approved: st.approved, state: st.state })),
    };
  }
});

/** Sites where a take-over failed, as the owner's agents reported them (decisions §21). */
export const takeoverReportsSection = list('takeover_reports', async function* ({ user, store }) {
  for (const r of await store.takeovers.reportsForUser(user.id, 10_000)) {
    yield { id: r.id, agent_id: r.agentId, site: r.site, kind: r.kind, detail: r.detail, url: r.url, created_at: iso(r.createdAt) };
  }
});

/** Web Bot Auth keys (decisions §22): public keys and the directory signature's expiry; nothing secret is stored. */
export const wbaKeysSection = list('wba_keys', async function* ({ user, store }) {
  for (const k of await store.wbaKeys.listForUser(user.id)) {
    yield { agent_id: k.agentId, label: k.label, kid: k.kid, public_key: { kty: 'OKP', crv: 'Ed25519', x: k.x }, created_at: iso(k.createdAt), updated_at: iso(k.updatedAt), proof_expires_at: iso(k.proof?.expiresAt ?? null) };
  }
});

/** Every grant of the owner's agents, revoked and superseded ones too; never the refresh token's hash. */
export const grantsSection = list('grants', async function* ({ user, store }) {
  for (const a of await store.agents.listForUser(user.id, true)) {
    for (const g of await store.grants.listForAgent(a.id)) {
      if (g.userId !== user.id) continue;
      yield {
        id: g.id, agent_id: g.agentId, site: g.site, scopes: g.scopes, user_info: g.userInfo, status: g.status, created_at: iso(g.createdAt), expires_at: iso(g.expiresAt),
        uses_left: g.usesLeft, passes_issued: g.passesIssued, revoked_at: iso(g.revokedAt), superseded_at: iso(g.supersededAt),
      };
    }
  }
});

export const requestsSection = list('requests', async function* ({ user, store }) {
  const rows = paged((after: string | undefined) => store.authzRequests.pageForUser(user.id, after ?? '', PAGE), (r) => r.id, PAGE);
  for await (const r of rows) {
    yield {
      id: r.id, kind: r.kind, agent_id: r.agentId, site: r.site, scopes: r.scopes, user_info: r.userInfo, action: r.action, status: r.status,
      created_at: iso(r.createdAt), expires_at: iso(r.expiresAt), decided_at: iso(r.decidedAt), grant_id: r.grantId,
      oidc: r.oidc && { client_id: r.oidc.clientId, client_name: r.oidc.clientName, verified: r.oidc.verified, flow: r.oidc.flow, binding_message: r.oidc.bindingMessage },
    };
  }
});

/**
 * Receipts of the owner's approvals (decisions §29): what the passkey signed and the values its
 * challenge commits to. An assertion is a proof, not a secret: it approves nothing again.
 */
export const receiptsSection = list('receipts', async function* ({ user, store }) {
  const rows = paged((after: string | undefined) => store.receipts.listForUser(user.id, after ?? '', PAGE), (r) => r.txnId, PAGE);
  for await (const r of rows) {
    yield {
      txn: r.txnId, agent_id: r.agentId, aud: r.site, action: r.action, details_digest: r.detailsDigest, user: r.userId, nonce: r.nonce, approved_at: iso(r.approvedAt),
      webauthn: { credential_id: r.credentialId, authenticator_data: r.authenticatorData, client_data_json: r.clientDataJson, signature: r.signature },
    };
  }
});

export const notificationsSection = list('notifications', async function* ({ user, store }) {
  const rows = paged((before: number | undefined) => store.notifications.list(user.id, { before: before ?? 0, limit: PAGE, since: 0 }), (n) => n.seq, PAGE);
  for await (const n of rows) {
    yield { id: n.id, type: n.type, title: n.title, body: n.body, created_at: iso(n.createdAt), read_at: iso(n.readAt), txn_id: n.txnId, takeover_id: n.takeoverId };
  }
});

/** The owner's audit trail, newest first, page by page. */
export const activitySection = list('activity', async function* ({ user, store }) {
  const rows = paged((before: number | undefined) => store.activity.list(user.id, { before: before ?? 0, limit: PAGE }), (r) => r.seq, PAGE);
  for await (const r of rows) {
    yield { seq: r.seq, action: r.action, agent_id: r.agentId, site: r.site, detail: r.detail, ip: r.ip, created_at: iso(r.createdAt) };
  }
});

/** Live OIDC sign-ins of the owner's agents, as the app shows them: no sid, no refresh hash, no key thumbprint. */
export const oidcSignInsSection = list('oidc_sign_ins', async function* ({ user, store, now }) {
  const names = new Map<string, string>();
  for (const s of await store.oidcSignIns.listLiveForUser(user.id, now)) {
    if (!names.has(s.clientId)) names.set(s.clientId, await storedClientName(store, s.clientId));
    yield {
      client_id: s.clientId, client_name: names.get(s.clientId), agent_id: s.agentId, grant_id: s.grantId, site: s.site, scopes: s.scopes, amr: s.amr,
      auth_time: iso(s.authTime * 1000), dpop_bound: s.dpopJkt !== null, created_at: iso(s.createdAt), expires_at: iso(s.expiresAt),
    };
  }
});

/** The sites (OIDC clients) the owner registered, without their secret's hash. */
export const oidcClientsSection = list('oidc_clients', async function* ({ user, store }) {
  for (const c of await store.oidcClients.listForUser(user.id)) {
    yield {
      id: c.id, name: c.name, redirect_uris: c.redirectUris, backchannel_logout_uri: c.backchannelLogoutUri, is_public: c.isPublic,
      secret_set_at: iso(c.secretSetAt), verified_origins: c.verifiedOrigins, verified_at: iso(c.verifiedAt), created_at: iso(c.createdAt), updated_at: iso(c.updatedAt),
    };
  }
});

/** Identity-provider accounts linked for sign-in and approval (decisions §15): which, and since when. */
export const identityProvidersSection = list('identity_providers', async function* ({ user, store }) {
  for (const i of await store.oauthIdentities.listForUser(user.id)) {
    yield { provider: i.provider, issuer: i.issuer, subject: i.subject, linked_at: iso(i.createdAt) };
  }
});

/**
 * The person's connections to operators, ended ones too (decisions §17): who, the id that operator
 * knows them by, the agent limit and the agents made through it. Never the codes of the consents.
 */
export const connectionsSection = list('connections', async function* ({ user, store }) {
  const connections = await store.connections.listForUser(user.id, CONNECTIONS_MAX);
  const agents = await store.connections.agentsOf(connections.map((c) => c.id));
  for (const c of connections) {
    const operator = await store.operators.byId(c.operatorId);
    yield {
      id: c.id, operator: { id: c.operatorId, name: operator?.name ?? null, domain: operator?.domain ?? null }, sub: c.sub,
      max_agents: c.maxAgents, status: c.status, created_at: iso(c.createdAt), ended_at: iso(c.endedAt),
      agents: agents.filter((a) => a.connectionId === c.id).map((a) => ({ id: a.id, name: a.name, status: a.status, created_at: iso(a.createdAt) })),
    };
  }
});

/** Operators the owner registered, without the secret's hash (decisions §17). */
export const operatorsSection = list('operators', async function* ({ user, store }) {
  for (const o of await store.operators.listForUser(user.id)) {
    yield {
      id: o.id, name: o.name, domain: o.domain, redirect_uris: o.redirectUris, browser: o.browser, status: o.status,
      verified_at: iso(o.verifiedAt), secret_set_at: iso(o.secretSetAt), created_at: iso(o.createdAt), updated_at: iso(o.updatedAt),
    };
  }
});

/** Every section this service has, in order. Other features add theirs with DataExport.add. */
export const EXPORT_SECTIONS: readonly ExportSection[] = [
  profileSection,
  notificationSettingsSection,
  passkeysSection,
  devicesSection,
  identityProvidersSection,
  agentsSection,
  grantsSection,
  requestsSection,
  receiptsSection,
  notificationsSection,
  activitySection,
  oidcSignInsSection,
  oidcClientsSection,
  plansSection,
  approvalModesSection,
  takeoverReportsSection,
  wbaKeysSection,
  connectionsSection,
  operatorsSection,
];
