import { createAgentJwt, detailsProblem, isValidAction, isValidScopeList, LIMITS, type AgentApprovalDetails, type ApprovalDetails } from '@mandate/protocol';
import { waitForAnswer, type WaitOptions } from './approvals/wait.ts';
import { AccessRequiredError, AgentRevokedError, InvalidInputError, KeyFileError } from './client/errors.ts';
import { ServiceClient, type FetchLike } from './client/http.ts';
import type { AgentStatus, CreatedRequest, PollAnswer } from './client/types.ts';
import { systemClock, type Clock } from './clock.ts';
import { AgentKey } from './keys/agent-key.ts';
import { defaultAgentDir, isAgentId, loadKeyFile } from './keys/key-file.ts';
import { oidcAuthorizeHeaders } from './oidc-sign-in.ts';
import { PassKeeper, type Pass } from './passes/pass-keeper.ts';
import { sendToSite, siteError, type SiteRequestInit } from './site-call.ts';
import { stepupDetailsFor } from './stepup-details.ts';
import { normalizeSiteId, siteIdOfUrl } from './site-id.ts';
import { checkPasswordManagerAllowed, configuredPasswordManager, type PasswordManager, type PasswordManagerFunction, type SecretSummary } from './password-manager.ts';
import { FileStateStore } from './state/file-state-store.ts';
import { WebBotAuth, type WbaSetup } from './wba.ts';
import { WbaKey, loadWbaKeyFile, saveWbaKeyFile } from './keys/wba-key.ts';
import { MemoryStateStore } from './state/memory-state-store.ts';
import type { StateStore } from './state/state-store.ts';

export type { AgentApprovalDetails };

export type MandateAgentOptions = {
  serviceUrl: string;
  agentId: string;
  /** The agent's private key: a private EC P-256 JWK (with `d`) or a loaded `AgentKey`. */
  privateKey: AgentKey | Record<string, unknown>;
  /** Where passes and refresh tokens are kept; default in memory (lost on exit). */
  store?: StateStore;
  /** Used for the service and for sites; default the global fetch. */
  fetch?: FetchLike;
  clock?: Clock;
  /** Per-request timeout towards the service (default 30 s). */
  timeoutMs?: number;
  /** The agent's password manager, for `listSecrets`, `fillSecret` and `saveSecret` (see password-manager.ts). */
  passwordManager?: PasswordManager;
  /**
   * Web Bot Auth (decisions §22): the agent's Ed25519 key (a private JWK or a loaded `WbaKey`) and,
   * once known, its address. With it, every `fetch` to a site is signed; `setupWebBotAuth()` makes one.
   */
  webBotAuth?: { key: WbaKey | Record<string, unknown>; signatureAgent?: string | null; proofExpiresAt?: number };
  /** Where `setupWebBotAuth()` keeps a key it generates (`wba-key.json`); set by `fromDirectory`. */
  keyDir?: string;
};

export type AccessRequest = { site: string; scopes: string[]; userInfo?: string[]; signal?: AbortSignal };

export type SiteFetchOptions = {
  /** The site id; default the URL's host (with :port when not the default). */
  site?: string;
  /** The action text to ask the owner to approve when the site answers `stepup_required`; default the `action` the site names. */
  stepupAction?: string;
  /**
   * What the owner reads on the step-up card for a JSON body; default the `summary` the site
   * suggests, else the action. The step-up is bound to the body (its digest) either way.
   */
  stepupSummary?: string;
  /** false: hand a `stepup_required` answer back instead of asking the owner. */
  stepup?: boolean;
  /** How to wait for the owner's step-up approval: progress callback, poll interval, timeout. */
  stepupWait?: Omit<WaitOptions, 'expiresAt' | 'signal'>;
  signal?: AbortSignal;
};

/**
 * The agent SDK: one agent (id + private key) talking to one Mandate service. It asks the owner
 * for access, keeps passes fresh, calls sites with pass + DPoP proof, gets step-ups when a site
 * asks for one, and reports to the owner. Every failure is a `MandateError` (see client/errors.ts).
 */
export class MandateAgent {
  readonly serviceUrl: string;
  readonly agentId: string;
  readonly key: AgentKey;
  private readonly client: ServiceClient;
  private readonly clock: Clock;
  private readonly fetchImpl: FetchLike;
  private readonly passes: PassKeeper;
  private readonly passwordManager: PasswordManager | undefined;
  private wba: WebBotAuth | undefined;
  private readonly keyDir: string | undefined;

  constructor(opts: MandateAgentOptions) {
    if (!isAgentId(opts.agentId)) throw new InvalidInputError(`not an agent id: ${JSON.stringify(opts.agentId)} (expected ag_...)`);
    this.agentId = opts.agentId;
    this.key = opts.privateKey instanceof AgentKey ? opts.privateKey : AgentKey.fromJwk(opts.privateKey);
    this.clock = opts.clock ?? systemClock;
    this.fetchImpl = opts.fetch ?? ((input, init) => fetch(input, init));
    this.client = new ServiceClient({ serviceUrl: opts.serviceUrl, fetch: this.fetchImpl, clock: this.clock, ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) });
    this.serviceUrl = this.client.serviceUrl;
    this.passwordManager = opts.passwordManager;
    this.keyDir = opts.keyDir;
    if (opts.webBotAuth) {
      const k = opts.webBotAuth.key instanceof WbaKey ? opts.webBotAuth.key : WbaKey.fromJwk(opts.webBotAuth.key);
      this.wba = this.webBotAuthWith(k, opts.webBotAuth.signatureAgent ?? null, opts.webBotAuth.proofExpiresAt ?? 0);
    }
    this.passes = new PassKeeper({ client: this.client, store: opts.store ?? new MemoryStateStore(), clock: this.clock, agentId: this.agentId, agentJwt: () => this.agentJwt() });
  }

  /**
   * The agent as `mandate-agent init` left it in `dir` (default `MANDATE_AGENT_DIR` or
   * `~/.mandate-agent`), with its passes and refresh tokens kept there too, so a restart goes on.
   */
  static fromDirectory(dir: string = defaultAgentDir(), opts: Omit<MandateAgentOptions, 'serviceUrl' | 'agentId' | 'privateKey' | 'store'> & { serviceUrl?: string } = {}): MandateAgent {
    const file = loadKeyFile(dir);
    if (!file.agentId) throw new KeyFileError(`the key in ${dir} has no agent id yet`, 'let the owner create the agent with its public key, then run: mandate-agent set-id ag_...');
    const wba = loadWbaKeyFile(dir);
    return new MandateAgent({
      ...opts, serviceUrl: opts.serviceUrl ?? file.serviceUrl, agentId: file.agentId, privateKey: file.key, store: new FileStateStore(dir), keyDir: dir,
      ...(wba ? { webBotAuth: { key: wba.key, signatureAgent: wba.signatureAgent, proofExpiresAt: wba.proofExpiresAt } } : {}),
    });
  }

  private webBotAuthWith(key: WbaKey, signatureAgent: string | null, proofExpiresAt = 0): WebBotAuth {
    const dir = this.keyDir;
    // Each setup or renewal is written down, so the next process (the next CLI call) renews only when due.
    const onSetup = dir ? (s: WbaSetup) => saveWbaKeyFile(dir, { key, signatureAgent: s.signatureAgent, proofExpiresAt: s.expiresAt }) : undefined;
    return new WebBotAuth(key, { client: this.client, clock: this.clock, agentId: this.agentId, agentJwt: () => this.agentJwt(), ...(onSetup ? { onSetup } : {}) }, signatureAgent, proofExpiresAt);
  }

  /**
   * Sets up Web Bot Auth: generates an Ed25519 key if the agent has none (kept in `wba-key.json`
   * of its directory when it has one), publishes it with the service, signs the key directory the
   * service serves at the agent's address and uploads that signature. From then on every `fetch`
   * to a site is signed, and the directory signature is renewed before it expires. Run it again
   * to renew at once.
   */
  async setupWebBotAuth(opts: { lifetimeSec?: number; signal?: AbortSignal } = {}): Promise<WbaSetup> {
    if (!this.wba) {
      const key = (this.keyDir ? loadWbaKeyFile(this.keyDir)?.key : undefined) ?? WbaKey.generate();
      // Saved before it is published, so a key the service knows is never lost.
      if (this.keyDir) saveWbaKeyFile(this.keyDir, { key, signatureAgent: null, proofExpiresAt: 0 });
      this.wba = this.webBotAuthWith(key, null);
    }
    return this.wba.setup(opts);
  }

  /** The Web Bot Auth headers for one request to `url` (after `setupWebBotAuth`), for requests the SDK does not send itself. */
  webBotAuthHeaders(url: string | URL): Record<string, string> {
    if (!this.wba) throw new InvalidInputError('Web Bot Auth is not set up: call setupWebBotAuth() first (or run: mandate-agent wba setup)');
    return this.wba.headersFor(url);
  }

  /** A fresh agent JWT (5 minutes of life) proving this agent to the service. */
  agentJwt(): Promise<string> {
    return createAgentJwt(this.key.privateKey, this.agentId);
  }

  /**
   * The header for one request to Mandate's `/oidc/authorize` when a site signs the agent in with
   * OpenID Connect: `{ 'X-Service-Agent': jwt }` with `htu` = `url` exactly, a fresh `jti`, 60 s of
   * life. Make a new one for each request (see oidc-sign-in.ts).
   */
  signInHeaders(url: string | URL): Promise<{ 'X-Service-Agent': string }> {
    return oidcAuthorizeHeaders(this.key.privateKey, this.agentId, url);
  }

  /** Asks the owner for access to a site (`POST /api/v1/authz-requests`). */
  async requestAccess(req: AccessRequest): Promise<CreatedRequest & { site: string }> {
    const site = normalizeSiteId(req.site);
    const scopes = [...new Set(req.scopes)];
    if (!isValidScopeList(scopes)) {
      throw new InvalidInputError(`invalid scopes ${JSON.stringify(req.scopes)}: 1 to ${LIMITS.maxScopes} scopes, each 1 to ${LIMITS.maxScopeLength} of [a-z0-9_:.-]`);
    }
    const userInfo = req.userInfo ?? [];
    if (!userInfo.every((f) => typeof f === 'string' && f.length > 0)) throw new InvalidInputError('user_info must be field names such as user:email');
    const body = { agent_id: this.agentId, site, scopes, user_info: userInfo, agent_jwt: await this.agentJwt() };
    const created = await this.client.call<{ txn_id: string; expires_in: number }>('POST', '/api/v1/authz-requests', { body, signal: req.signal });
    return { site, ...this.created(created) };
  }

  /**
   * Waits until the owner answers a request; see `waitForAnswer`. Resolves with the approved
   * answer, rejects with `ApprovalError` otherwise. An approved access request replaces any
   * earlier grant for the site, so the pass and refresh token kept for it are dropped.
   */
  async waitForApproval(txnId: string, opts: WaitOptions = {}): Promise<PollAnswer> {
    const answer = await waitForAnswer({ client: this.client, clock: this.clock, agentJwt: () => this.agentJwt() }, txnId, opts);
    if (answer.kind === 'initial') await this.passes.forget(answer.site);
    return answer;
  }

  /** `requestAccess` then `waitForApproval`. */
  async requestAccessAndWait(req: AccessRequest, opts: Omit<WaitOptions, 'expiresAt'> = {}): Promise<PollAnswer> {
    const created = await this.requestAccess(req);
    return this.waitForApproval(created.txnId, { ...opts, expiresAt: created.expiresAt });
  }

  /**
   * A valid pass for the site: the kept one while fresh, else a renewed one (refresh token
   * rotation; right after an approval, the first pass). `AccessRequiredError` when only a new
   * approval can give one; `AgentRevokedError` when the owner blocked the agent.
   */
  pass(site: string, opts: { force?: boolean; signal?: AbortSignal } = {}): Promise<Pass> {
    return this.passes.get(site, opts);
  }

  /**
   * Calls a site with the pass and a fresh DPoP proof. When the site answers `401 token_expired`,
   * `401 grant_revoked` or `401 agent_revoked` the pass is renewed and the call retried once (a
   * renewal refused for want of access rejects with `AccessRequiredError`, one refused because the
   * owner revoked the agent with `AgentRevokedError`, both naming the site's answer); when it answers `403 stepup_required` the owner
   * is asked to approve the action, and the call is retried once with the step-up token and the
   * same body. A JSON body binds the step-up to it: the owner approves with `details` (the site's
   * suggested `summary`, and the digest of the body), so the token is good for that body only. Any
   * other answer is returned as it is.
   */
  async fetch(url: string, init: SiteRequestInit = {}, opts: SiteFetchOptions = {}): Promise<Response> {
    const site = opts.site ? normalizeSiteId(opts.site) : siteIdOfUrl(url);
    const wba = this.wba;
    if (wba) await wba.ensureFresh(opts.signal);
    const sign = wba ? (u: string) => wba.headersFor(u) : undefined;
    const send = async (pass: Pass, stepupToken?: string) => sendToSite(this.fetchImpl, this.key, url, { ...init, ...(opts.signal ? { signal: opts.signal } : {}) }, pass, stepupToken, sign);

    let res = await send(await this.pass(site, { ...(opts.signal ? { signal: opts.signal } : {}) }));
    let error = await siteError(res);
    // An expired pass, one of a grant the owner replaced by a new approval, or a site that says the
    // agent is revoked (the service decides: an unblocked agent gets a pass): renew and try once more.
    // If the access or the agent is really gone, renewing says so (AccessRequiredError, AgentRevokedError).
    if (res.status === 401 && (error?.error === 'token_expired' || error?.error === 'grant_revoked' || error?.error === 'agent_revoked')) {
      await res.body?.cancel();
      const siteAnswer = error.error;
      const renewed = await this.pass(site, { force: true }).catch((e: unknown) => {
        // Keep what the site said: "grant_revoked" tells the caller more than the service's refusal alone.
        if (e instanceof AccessRequiredError) throw new AccessRequiredError(e.site, { status: e.status, detail: e.detail, nextStep: e.nextStep, method: e.method, path: e.path, cause: e }, siteAnswer);
        if (e instanceof AgentRevokedError) throw new AgentRevokedError({ status: e.status, detail: e.detail, nextStep: e.nextStep, method: e.method, path: e.path, cause: e }, siteAnswer);
        throw e;
      });
      res = await send(renewed);
      error = await siteError(res);
    }
    if (res.status !== 403 || error?.error !== 'stepup_required' || opts.stepup === false) return res;
    const action = opts.stepupAction ?? error.action;
    if (!action) return res; // nothing to ask the owner for: the caller decides
    await res.body?.cancel();
    const details = stepupDetailsFor(init, opts.stepupSummary ?? error.summary, action);
    const token = await this.stepup(site, action, { ...opts.stepupWait, ...(opts.signal ? { signal: opts.signal } : {}), ...(details ? { details } : {}) });
    return send(await this.pass(site), token);
  }

  /**
   * Asks the owner to approve one sensitive action at a site (`POST /api/v1/stepup`). `details`
   * `{summary, digest}` (decisions §29) bind the approval to exactly what it is for: the card shows
   * the summary, and the step-up token carries the digest (`detailsDigestOf` of @mandate/protocol).
   */
  async requestStepup(site: string, action: string, opts: { signal?: AbortSignal; details?: ApprovalDetails } = {}): Promise<CreatedRequest & { site: string; action: string }> {
    const siteId = normalizeSiteId(site);
    if (!isValidAction(action)) throw new InvalidInputError(`invalid action ${JSON.stringify(action)}: 1 to ${LIMITS.actionMaxLength} printable characters`);
    const problem = opts.details === undefined ? null : detailsProblem(opts.details);
    if (problem !== null) throw new InvalidInputError(problem);
    const body = { agent_id: this.agentId, site: siteId, action, ...(opts.details && { details: opts.details }), agent_jwt: await this.agentJwt() };
    const created = await this.client.call<{ txn_id: string; expires_in: number }>('POST', '/api/v1/stepup', { body, signal: opts.signal });
    return { site: siteId, action, ...this.created(created) };
  }

  /** Requests a step-up (with `details` when given), waits for the owner and returns the step-up token (single use, 60 s). */
  async stepup(site: string, action: string, opts: Omit<WaitOptions, 'expiresAt'> & { details?: ApprovalDetails } = {}): Promise<string> {
    const { details, ...wait } = opts;
    const created = await this.requestStepup(site, action, { ...(wait.signal && { signal: wait.signal }), ...(details && { details }) });
    const answer = await this.waitForApproval(created.txnId, { ...wait, expiresAt: created.expiresAt });
    return answer.stepup_token ?? '';
  }

  /**
   * Submits a scheduled task's plan for the owner to pre-approve (`POST /api/v1/plans`, decisions
   * §20): one card; at run time an agent approval that matches a chosen step exactly passes without
   * one. `texts` stay here: the service stores only their digests (textDigest of @mandate/protocol).
   */
  async submitPlan(plan: PlanInput): Promise<{ plan_id: string; txn_id: string; status: 'pending'; expires_in: number }> {
    const body = { agent_id: this.agentId, agent_jwt: await this.agentJwt(), ...plan };
    return this.client.call('POST', '/api/v1/plans', { body });
  }

  /** The plan as the agent sees it: each step pre-approved or asking, uses left, state (`POST /api/v1/plans/{plan_id}/status`). */
  async planStatus(planId: string): Promise<PlanView> {
    const body = { agent_id: this.agentId, agent_jwt: await this.agentJwt() };
    return this.client.call('POST', `/api/v1/plans/${encodeURIComponent(planId)}/status`, { body });
  }

  /** Reports what the click of a pre-approved step (the agent approval `txnId`) did, so later steps may run (`POST /api/v1/plans/result`). */
  async planResult(txnId: string, result: 'done' | 'failed' | 'unknown'): Promise<PlanView> {
    const body = { agent_id: this.agentId, agent_jwt: await this.agentJwt(), txn_id: txnId, result };
    return this.client.call('POST', '/api/v1/plans/result', { body });
  }

  /**
   * Asks the owner to approve one action on any site (`POST /api/v1/agent-approval`, decisions §19):
   * no grant is needed. `action` is `[a-z0-9_:-]{1,64}`; `details` (label, amount, page, hosts, ...)
   * are what the owner's card shows. The owner's approval mode may approve it at once (`status`).
   */
  async requestApproval(site: string, action: string, details: AgentApprovalDetails = {}, opts: { signal?: AbortSignal } = {}): Promise<CreatedRequest & { site: string; action: string; status: 'pending' | 'approved' }> {
    const siteId = normalizeSiteId(site);
    if (!/^[a-z0-9_:-]{1,64}$/.test(action)) throw new InvalidInputError(`invalid action ${JSON.stringify(action)}: 1 to 64 of [a-z0-9_:-], for example checkout:submit`);
    const body = { agent_id: this.agentId, site: siteId, action, details, agent_jwt: await this.agentJwt() };
    const created = await this.client.call<{ txn_id: string; expires_in: number; status: 'pending' | 'approved' }>('POST', '/api/v1/agent-approval', { body, signal: opts.signal });
    return { site: siteId, action, status: created.status, ...this.created(created) };
  }

  /**
   * `requestApproval`, then waits for the owner unless a mode approved it at once. Resolves when
   * approved; rejects with `ApprovalError` (`denied`, `expired`, `timeout`) otherwise.
   */
  async approve(site: string, action: string, details: AgentApprovalDetails = {}, opts: Omit<WaitOptions, 'expiresAt'> = {}): Promise<{ txnId: string; status: 'approved' }> {
    const created = await this.requestApproval(site, action, details, opts.signal ? { signal: opts.signal } : {});
    if (created.status !== 'approved') await this.waitForApproval(created.txnId, { ...opts, expiresAt: created.expiresAt });
    return { txnId: created.txnId, status: 'approved' };
  }

  /** A one-way note to the owner's phone (`POST /api/v1/agent-notify`). */
  /** Answers where the note went: `inbox` (kept in the owner's inbox) and `devices` (pushed to how many). */
  async notify(note: { text: string; title?: string; kind?: string }): Promise<{ inbox: boolean; devices: number }> {
    if (!note.text) throw new InvalidInputError('the note needs a text');
    const body = { agent_id: this.agentId, agent_jwt: await this.agentJwt(), text: note.text, ...(note.title !== undefined ? { title: note.title } : {}), ...(note.kind !== undefined ? { kind: note.kind } : {}) };
    const answer = await this.client.call<{ inbox?: boolean; devices?: number }>('POST', '/api/v1/agent-notify', { body });
    return { inbox: answer.inbox ?? true, devices: answer.devices ?? 0 };
  }

  /**
   * Asks the owner to take over the browser (`POST /api/v1/takeover`): answers the session and its
   * relay token, for `streamTakeover` (takeover.ts). At most one open take-over per agent.
   */
  async requestTakeover(req: { url: string; reason: string }): Promise<{ takeoverId: string; agentToken: string; expiresIn: number }> {
    const body = { agent_id: this.agentId, agent_jwt: await this.agentJwt(), url: req.url, reason: req.reason };
    const a = await this.client.call<{ takeover_id: string; agent_token: string; expires_in: number }>('POST', '/api/v1/takeover', { body });
    return { takeoverId: a.takeover_id, agentToken: a.agent_token, expiresIn: a.expires_in };
  }

  /** Reports a site where a take-over failed (`POST /api/v1/takeover/report`); answers the report id. */
  async reportTakeover(report: { site: string; kind: string; detail?: string; url?: string }): Promise<string> {
    const body = { agent_id: this.agentId, agent_jwt: await this.agentJwt(), site: report.site, kind: report.kind, ...(report.detail !== undefined ? { detail: report.detail } : {}), ...(report.url !== undefined ? { url: report.url } : {}) };
    return (await this.client.call<{ id: string }>('POST', '/api/v1/takeover/report', { body })).id;
  }

  /** Whether the agent is still authorized (`GET /api/v1/agent-status`); `AgentRevokedError` once revoked. */
  status(): Promise<AgentStatus> {
    return this.agentJwt().then((jwt) => this.client.call<AgentStatus>('GET', `/api/v1/agent-status?agent_id=${encodeURIComponent(this.agentId)}`, { headers: { 'x-agent-jwt': jwt } }));
  }

  /** Reports the agent's current status for the owner's dashboard (`POST /api/v1/agent-status`). */
  async reportStatus(report: { status: string; site?: string }): Promise<void> {
    const body = { agent_id: this.agentId, agent_jwt: await this.agentJwt(), status: report.status, ...(report.site !== undefined ? { site: report.site } : {}) };
    await this.client.call('POST', '/api/v1/agent-status', { body });
  }

  /**
   * The secrets the password manager keeps for a site. Like `fillSecret` and `saveSecret`, it first
   * reads the agent status, and refuses with `PasswordManagerOffError` (nothing reaches the password
   * manager) while the agent's browser runs on its operator's computers and the owner has not turned
   * the password manager on for it (decisions §17); the agent then asks for a take-over instead.
   */
  async listSecrets(site: string): Promise<SecretSummary[]> {
    const siteId = normalizeSiteId(site);
    return (await this.allowedPasswordManager('listSecrets')).listSecrets(siteId);
  }

  /** Fills a secret into the site's page through the password manager; refused as `listSecrets` says. */
  async fillSecret(site: string, secretId: string): Promise<void> {
    const siteId = normalizeSiteId(site);
    if (typeof secretId !== 'string' || secretId.length === 0) throw new InvalidInputError('fillSecret needs the id of a secret, as listSecrets gives it');
    await (await this.allowedPasswordManager('fillSecret')).fillSecret(siteId, secretId);
  }

  /** Keeps a new secret for the site in the password manager; refused as `listSecrets` says. */
  async saveSecret(site: string, secret: { label: string; value: string }): Promise<SecretSummary> {
    const siteId = normalizeSiteId(site);
    if (typeof secret?.label !== 'string' || secret.label.length === 0 || typeof secret.value !== 'string' || secret.value.length === 0) {
      throw new InvalidInputError('saveSecret needs a non-empty label and value');
    }
    return (await this.allowedPasswordManager('saveSecret')).saveSecret(siteId, { label: secret.label, value: secret.value });
  }

  /** Asked afresh each time, so that the owner's switch takes effect on the next call. */
  private async allowedPasswordManager(fn: PasswordManagerFunction): Promise<PasswordManager> {
    const pm = configuredPasswordManager(this.passwordManager, fn);
    checkPasswordManagerAllowed(await this.status(), fn);
    return pm;
  }

  private created(c: { txn_id: string; expires_in: number }): CreatedRequest {
    const expiresIn = typeof c.expires_in === 'number' ? c.expires_in : LIMITS.requestLifetimeSec;
    return { txnId: c.txn_id, expiresIn, expiresAt: this.clock.now() + expiresIn * 1000 };
  }
}

/** A plan (decisions §20): times in Unix seconds; 1 to 20 steps. */
export interface PlanInput {
  title: string;
  start_at: number;
  end_at: number;
  steps: { id?: string; url: string; path?: string; button: string; texts?: string[]; after?: string[]; uses?: number }[];
}

/** A plan as POST /api/v1/plans/{plan_id}/status answers it. */
export interface PlanView {
  plan_id: string;
  title: string;
  status: 'pending' | 'approved' | 'denied' | 'withdrawn' | 'expired';
  start_at: number;
  end_at: number;
  steps: { id: string; button: string; url: string; state: string; approved: boolean; pre_approvable: boolean; uses_left: number; reason?: string }[];
}
