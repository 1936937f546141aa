import { IdentityProviders } from './domain/identity-providers/identity-providers.ts';
import { OpenIdIssuers } from './outbound/openid-issuers.ts';
import { Receipts } from './domain/receipts/receipts.ts';
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import cookie from '@fastify/cookie';
import websocket from '@fastify/websocket';
import { TakeoverRelay } from './relay/takeover-relay.ts';
import { MAX_MESSAGE_BYTES } from './domain/takeovers/relay-messages.ts';
import swagger from '@fastify/swagger';
import type { Config } from './config/config.ts';
import { fastifyTrustProxy } from './config/trust-proxy.ts';
import { type Clock, systemClock } from './clock.ts';
import { RateLimiter } from './domain/rate-limit.ts';
import { nodeName, scheduleHousekeeping } from './domain/housekeeping.ts';
import { Accounts, newUserRecord } from './domain/accounts/accounts.ts';
import { AddressTakeover } from './domain/accounts/address-takeover.ts';
import { Agents } from './domain/agents/agents.ts';
import { Passkeys } from './domain/passkeys/passkeys.ts';
import { KeyEncryption } from './crypto/key-encryption.ts';
import { SigningKeys } from './crypto/signing-keys.ts';
import { signatureWorker } from './crypto/signature-worker.ts';
import { OwnerAuth } from './http/auth/owner.ts';
import { Activity } from './domain/activity/activity.ts';
import { Notifier } from './domain/notifications/notifier.ts';
import { NotifySettings } from './domain/notifications/settings.ts';
import { Inbox } from './domain/notifications/inbox.ts';
import { Devices } from './domain/devices/devices.ts';
import { OutboxWorker } from './delivery/outbox-worker.ts';
import { buildTransports } from './delivery/transports.ts';
import { loadVapidKeys } from './delivery/vapid-keys.ts';
import { Passes } from './domain/passes/issue-pass.ts';
import { CloudVerifier } from './domain/verification/cloud-verify.ts';
import { LocalStepupVerifier } from './domain/verification/local-stepup.ts';
import { RevocationSnapshots } from './domain/revocation/snapshot.ts';
import { AgentStatuses } from './domain/agents/agent-status.ts';
import { AgentNotes } from './domain/notes.ts';
import { Takeovers } from './domain/takeovers/takeovers.ts';
import { Operators } from './domain/operators/operators.ts';
import { Consent } from './domain/operators/consent.ts';
import { ConnectionLifecycle } from './domain/operators/connection-lifecycle.ts';
import { OperatorAgents } from './domain/operators/operator-agents.ts';
import { Readiness } from './domain/readiness/readiness.ts';
import { Challenge } from './domain/challenge/challenge.ts';
import { CHALLENGE_ACTION, CHALLENGE_SCOPE, challengeSite } from '@mandate/web';
import { Reputation } from './domain/reputation/reputation.ts';
import { Reports } from './domain/reputation/reports.ts';
import { Approvals } from './domain/approvals/approvals.ts';
import { planMatchOf } from './domain/plans/plan-match.ts';
import { Plans } from './domain/plans/plans-service.ts';
import { Grants } from './domain/grants/grants.ts';
import { endAgentAccess } from './domain/grants/agent-stopped.ts';
import { OidcClients } from './domain/oidc/clients.ts';
import { Pairing } from './domain/agents/pairing.ts';
import { OidcProvider } from './domain/oidc/provider.ts';
import { AppConsent } from './domain/oidc/authorize-consent.ts';
import { MetadataDocuments } from './domain/oidc/metadata-documents.ts';
import { loadOidcSecret } from './crypto/oidc-secret.ts';
import { endOidcStanding, endSignIn } from './domain/oidc/sign-in-end.ts';
import { AccountDeletion } from './domain/privacy/account-deletion.ts';
import { standardErasureSteps } from './domain/privacy/erasure-steps.ts';
import { guardedFetch } from './outbound/guarded-fetch.ts';
import { WebBotAuth } from './domain/wba/web-bot-auth.ts';
import { AgentChecks } from './domain/wba/check-agent.ts';
import { pushHostPolicy } from './outbound/push-hosts.ts';
import { OutboxMailer } from './domain/mail/mailer.ts';
import { PasswordReset } from './domain/accounts/password-reset.ts';
import { DataExport } from './domain/privacy/export.ts';
import { EXPORT_SECTIONS } from './domain/privacy/export-sections.ts';
import { EmailVerification } from './domain/accounts/email-verification.ts';
import { FirstPasskeyNotice } from './domain/passkeys/first-passkey.ts';
import { OutboxSms } from './domain/sms/sms-queue.ts';
import { Phone } from './domain/phone/phone.ts';
import { Recovery } from './domain/recovery/recovery.ts';
import { installErrorHandling } from './http/errors.ts';
import { installJsonBody, installNulGuard } from './http/json-body.ts';
import { installSecurityHeaders } from './http/security-headers.ts';
import { clientErrorHandler } from './http/client-errors.ts';
import { validatorCompiler } from './http/validation.ts';
import { registerRoutes } from './http/routes/index.ts';
import type { Services } from './services.ts';
import { openStore } from './store/open.ts';
import { Metrics } from './metrics/metrics.ts';
import { RevocationSequence } from './domain/revocation/rev-seq.ts';
import { DEFAULT_EVENTS_OPTIONS, RevocationEvents } from './domain/revocation/events.ts';
import { closeUnusedConnectionsOnClose } from './http/unused-connections.ts';
import type { Store } from './store/ports/index.ts';
import { SdkTarballs } from './downloads/sdk-tarballs.ts';
import { WordpressZips } from './downloads/wordpress-zip.ts';

export interface BuildOptions {
  config: Config;
  /** An open store; when absent one is opened from the configuration (and closed with the app). */
  store?: Store;
  clock?: Clock;
  logger?: FastifyServerOptions['logger'];
  /** Where the default logger writes (stdout when absent); tests read it to check what is logged. */
  logStream?: NodeJS.WritableStream;
}

export interface Built {
  app: FastifyInstance;
  services: Services;
}

const API_DESCRIPTION = `Mandate: owners approve, with a passkey, what each of their agents may do at each site; agents get
short-lived DPoP-bound passes; sites verify every request. Errors: 4xx \`{"detail": text}\` (agent endpoints, and owner refusals that need a different sign-in, may add
\`next_step\`); 422 \`{"detail": [{"loc", "msg", "type"}]}\`; 429 \`{"detail": "rate limit exceeded…", "retry_after": s}\`
with Retry-After (a quota adds what it counts and \`quota\`); 503 \`{"detail": "service unavailable"}\` while the database is unreachable. Owner endpoints take the
session cookie (\`__Host-session\` on https, \`session\` on http://localhost) or \`Authorization: Bearer <session_token>\`; cookie requests that change state from another origin get 403.`;

/** Wiring: config -> store -> keys -> domain services -> routes. */
export async function buildApp(opts: BuildOptions): Promise<Built> {
  const { config } = opts;
  const clock = opts.clock ?? systemClock;
  const ownsStore = !opts.store;
  // Prometheus metrics (docs/operations/metrics.md), a registry per app; served by main.ts when METRICS_PORT is set.
  const metrics = new Metrics();
  const store = opts.store ?? (await openStore(config, (worker) => metrics.workerRestarted(worker)));

  const encryption = config.keyEncryptionKey ? new KeyEncryption(config.keyEncryptionKey) : null;
  const keys = new SigningKeys(store.signingKeys, clock, { encryption, graceSec: config.keyRotationGraceSec });
  await keys.init();
  const vapid = await loadVapidKeys(config.vapid, store.serviceSecrets, encryption, clock);
  const limiter = new RateLimiter(store.rateCounters, clock);
  const accounts = new Accounts(store, clock, limiter, config);
  const activity = new Activity(store.activity, clock);
  const agents = new Agents(store, clock, limiter, activity);
  const passkeys = new Passkeys(store, clock, limiter, { baseUrl: config.baseUrl, rpName: config.rpName });
  const auth = new OwnerAuth(accounts, config.baseUrl);
  const notifier = new Notifier(store, clock);
  const notifySettings = new NotifySettings(store, clock);
  const inbox = new Inbox(store, clock);
  const devices = new Devices(store, clock, limiter, passkeys, { allowLoopback: config.outboundAllowLoopback }, config.fcm !== null, pushHostPolicy(config.pushServiceHosts, config.outboundAllowLoopback));
  agents.onCreated((agent, how) => notifier.agentAdded(agent.userId, agent.name, how));
  passkeys.onRegistered((p) => notifier.security(p.userId, 'New passkey added', `"${p.name}" can now sign in and approve requests. Not you? Remove it under Account and change your password.`));
  // Every node sends the outbox; each message is claimed by one node (delivery/outbox-worker.ts).
  const outbox = new OutboxWorker({ store, clock, transports: await buildTransports(config, vapid, clock, keys), holder: nodeName(), pollMs: config.outboxPollMs, claimMs: config.outboxClaimSec * 1000, onFailed: (channel) => metrics.deliveryFailed(channel) });
  notifier.onQueued(() => outbox.wake());
  // Mail (decisions §25) goes through the same outbox; its stored copy is sealed under KEY_ENCRYPTION_KEY when set.
  const mailer = new OutboxMailer(store, clock, encryption, () => outbox.wake());
  const emailVerification = new EmailVerification({ store, clock, limiter, mailer, baseUrl: config.baseUrl });
  // SMS (decisions §14) goes through the outbox too, sealed at rest like mail: each holds a one-time code.
  const sms = new OutboxSms(store, clock, encryption, () => outbox.wake());
  const phone = new Phone({ store, clock, limiter, sms, notices: notifier });
  const recovery = new Recovery({ store, clock, limiter, sms, notices: notifier, accounts, providerLabel: (name) => config.oauthProviders.find((p) => p.name === name)?.label ?? name });
  const addressTakeover = new AddressTakeover({ store, clock, limiter, mailer, baseUrl: config.baseUrl, newUser: newUserRecord });
  accounts.useAddressTakeover(addressTakeover);
  // Off-path failures (the forgot mail is written after the answer) go to the app's log, built below.
  const passwordReset = new PasswordReset({ store, clock, limiter, mailer, notices: notifier, baseUrl: config.baseUrl, onError: (err) => app.log.error({ err }, 'a password-reset link could not be stored or queued') });
  const dataExport = new DataExport({ store, clock, limiter, baseUrl: config.baseUrl, role: (u) => accounts.role(u) }, EXPORT_SECTIONS);
  const grants = new Grants(store, clock, activity);
  const firstPasskey = new FirstPasskeyNotice({ store, clock, limiter, mailer, notices: notifier, grants, baseUrl: config.baseUrl });
  passkeys.onFirstRegistered((p) => firstPasskey.notify(p));
  emailVerification.onVerified((userId) => firstPasskey.afterEmailVerified(userId));
  const passes = new Passes({ store, keys, clock, agents, limiter, issuer: config.baseUrl });
  const verifierDeps = { store, keys, clock, activity, issuer: config.baseUrl };
  // Started at the first verification, stopped with the app.
  const proofSignatures = signatureWorker(() => metrics.workerRestarted('signature'));
  const verifier = new CloudVerifier({ ...verifierDeps, proofSignatures: proofSignatures.check });
  const localStepup = new LocalStepupVerifier(verifierDeps);
  const revocation = new RevocationSnapshots(store, keys, clock, config.baseUrl);
  const revSeq = new RevocationSequence(store.counters);
  const revocationEvents = new RevocationEvents(revocation, revSeq, store.revocationSignal, (claims, typ) => keys.sign(claims, typ), clock, config.baseUrl,
    {
      ...DEFAULT_EVENTS_OPTIONS,
      keepAliveMs: config.revocationEvents.keepAliveMs,
      heldDeltas: config.revocationEvents.heldDeltas,
      maxStreams: config.revocationEvents.maxStreams,
      maxStreamsPerAddress: config.revocationEvents.maxStreamsPerAddress,
      maxStreamsPerNetwork: config.revocationEvents.maxStreamsPerNetwork,
    }, (n) => metrics.revocationDeltasSent(n));
  metrics.attachSources({ outboxBacklog: () => store.outbox.countPending(), revSeq: () => revSeq.current(), revocationEntries: () => revocation.lastBuiltEntries(), revocationStreams: () => revocationEvents.openStreams, pool: () => store.poolStats?.() });
  const agentStatuses = new AgentStatuses(store, clock, activity, limiter, config.baseUrl);
  const notes = new AgentNotes(activity, notifier, limiter);
  const takeovers = new Takeovers(store, clock, activity, notifier, limiter);
  const reputation = new Reputation(store, clock);
  const reports = new Reports(store, clock, keys.resolver, config.baseUrl, limiter, activity);
  // An agent that stops (removed or revoked) ends its open requests and grants in the same transaction.
  agents.onStopped(endAgentAccess(clock, notifier));
  const plans = new Plans({ store, clock, limiter, agents, activity, notifier });
  // An agent approval matching a pre-approved plan step is approved without a card (decisions §20).
  const approvals = new Approvals({ store, clock, limiter, agents, passkeys, keys, activity, notifier, issuer: config.baseUrl, planMatch: planMatchOf(plans) });
  const receipts = new Receipts({ store, clock, keys, agents, issuer: config.baseUrl });
  // Site verification fetches addresses the owner chose: only through the outbound guard (§24).
  const oidcClients = new OidcClients({ store, clock, limiter, fetch: guardedFetch({ allowLoopback: config.outboundAllowLoopback }), policy: { allowLoopback: config.outboundAllowLoopback } });
  const oidcSecret = await loadOidcSecret(store.serviceSecrets, encryption, clock);
  // A client_id that is a URL names its metadata document, fetched through the outbound guard too (§24, §28).
  const metadataDocuments = new MetadataDocuments({ clock, limiter, fetch: guardedFetch({ allowLoopback: config.outboundAllowLoopback }), policy: { allowLoopback: config.outboundAllowLoopback } });
  const oidc = new OidcProvider({ store, clock, keys, secret: oidcSecret, clients: oidcClients, metadataDocuments, notifier, activity, limiter, issuer: config.baseUrl });
  // A revoked grant or a stopped agent ends its OIDC sign-ins (and queues back-channel logouts) in
  // the same transaction, and the sites' clients forget its subjects there: CIBA's login_hint no
  // longer finds the agent until it signs in there again.
  grants.onRevoked(async (repos, grant, now) => void (await endOidcStanding(repos, oidcSecret, { agentId: grant.agentId, site: grant.site, resource: grant.resource }, now)));
  agents.onStopped(async (repos, agent) => void (await endOidcStanding(repos, oidcSecret, { agentId: agent.id }, clock.now())));
  // Domain verification fetches an address the operator chose: only through the outbound guard (§24).
  const operators = new Operators({ store, clock, limiter, activity, fetch: guardedFetch({ allowLoopback: config.outboundAllowLoopback }), policy: { allowLoopback: config.outboundAllowLoopback } });
  const pairing = new Pairing(store.challenges, clock, limiter, agents);
  // The issuers are the operator's choice (configuration), not a user's: see outbound/openid-issuers.ts.
  const identityProviders = new IdentityProviders({ store, clock, limiter, accounts, approvals, activity, notifier, issuers: new OpenIdIssuers(config.baseUrl), providers: config.oauthProviders });
  const relay = new TakeoverRelay(takeovers, clock, { nodeUrl: config.nodeInternalUrl, mode: config.takeoverRelay });
  // Account deletion (decisions §16): one erasure step per concept, all in one transaction; the
  // back-channel logouts its agent and sign-in steps queue go out once it commits.
  const accountDeletion = new AccountDeletion({
    store, clock, accounts,
    steps: standardErasureSteps({ agents, endSignIn: (repos, sid, now) => endSignIn(repos, oidcSecret, sid, now) }),
    afterCommit: () => {
      outbox.wake();
      // The owner's take-overs relayed here close at once (those on other nodes at their next check).
      void relay.checkHeld().catch(() => {});
    },
  });
  // Ending a connection removes its agents as the owner's removal does (connection-lifecycle.ts).
  const connections = new ConnectionLifecycle({ store, clock, activity, agents });
  const appConsent = new AppConsent({ ...oidc.deps, passkeys });
  const consent = new Consent({ store, clock, passkeys, activity, limiter, secret: oidcSecret, issuer: config.baseUrl, lifecycle: connections });
  const operatorAgents = new OperatorAgents({ store, activity, agents, lifecycle: connections });
  // The readiness check fetches a site someone named: only through the outbound guard (§24).
  const readiness = new Readiness({ store, clock, limiter, fetch: guardedFetch({ allowLoopback: config.outboundAllowLoopback }), policy: { allowLoopback: config.outboundAllowLoopback } });
  // The challenge is verified by this service's own verifier, as a site in cloud mode would (§23).
  const challenge = new Challenge({ verifier, baseUrl: config.baseUrl, site: challengeSite(config.baseUrl), scope: CHALLENGE_SCOPE, action: CHALLENGE_ACTION });
  // Web Bot Auth (decisions §22); foreign key directories are fetched only through the outbound guard (§24).
  const wba = new WebBotAuth({ store, clock, limiter, baseUrl: config.baseUrl, agentDomain: config.wbaAgentDomain });
  const agentChecks = new AgentChecks({ wba, clock, limiter, fetch: guardedFetch({ allowLoopback: config.outboundAllowLoopback }), policy: { allowLoopback: config.outboundAllowLoopback } });
  const services: Services = { operators, consent, appConsent, connections, operatorAgents, takeovers, relay, accountDeletion, identityProviders, phone, recovery, sdkTarballs: new SdkTarballs(), wordpressZips: new WordpressZips(), metrics, emailVerification, passwordReset, dataExport, addressTakeover, firstPasskey, pairing, oidcClients, oidc, vapidPublicKey: vapid.publicKey, notifySettings, inbox, devices, outbox, approvals, receipts, plans, grants, config, store, clock, limiter, keys, accounts, agents, passkeys, auth, activity, notifier, passes, verifier, localStepup, revocation, revocationEvents, agentStatuses, notes, reputation, reports, challenge, readiness, wba, agentChecks };

  const app = Fastify({
    logger: opts.logger ?? {
      level: config.logLevel,
      // Request logs carry method, URL and addresses only; these headers are redacted should a
      // serializer ever include them. Bodies (passwords, tokens) are never logged.
      redact: ['req.headers.authorization', 'req.headers.cookie', 'req.headers.dpop', 'req.headers["x-agent-jwt"]', 'req.headers["x-service-stepup"]', 'req.headers["x-authyouragent-stepup"]', 'req.headers["x-service-agent"]', 'req.headers["x-authyouragent-agent"]'],
      // Fastify's own request fields, with the secret `k` of an OIDC wait address, the `token` of a
      // mailed link and an identity provider's `code` and `state` (the callback) left out of the URL.
      serializers: { req: (r: FastifyRequest) => ({ method: r.method, url: r.url.replace(/([?&](?:k|token|code|state)=)[^&]*/g, '$1[redacted]'), host: r.host, remoteAddress: r.ip, remotePort: r.socket?.remotePort }) },
      ...(opts.logStream ? { stream: opts.logStream } : {}),
    },
    bodyLimit: config.bodyLimitBytes,
    trustProxy: fastifyTrustProxy(config.trustProxy),
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    routerOptions: { maxParamLength: 200 },
    // Errors raised by the router before a route runs (malformed URL, over-long path parameter) get
    // the same `{detail}` body as every other 4xx.
    frameworkErrors: (err, _request, reply) => {
      const status = err.statusCode && err.statusCode < 500 ? err.statusCode : 400;
      void (reply as unknown as FastifyReply).code(status).send({ detail: err.message });
    },
    ajv: { customOptions: { allErrors: true } },
    clientErrorHandler,
  });
  notifier.attachLog(app.log);
  notifier.onNotesDropped((n) => metrics.notePushesDroppedBy(n));
  outbox.attachLog(app.log);
  relay.attachLog(app.log);
  outbox.start();
  app.addHook('preClose', () => outbox.stop());
  // Links being mailed when the app stops are finished while the store is open.
  app.addHook('preClose', () => passwordReset.settled());
  app.setValidatorCompiler(validatorCompiler);
  installJsonBody(app);
  installNulGuard(app);
  installErrorHandling(app, config.bodyLimitBytes, () => metrics.databaseDown());
  // The route label is the route's pattern, never the raw URL (unbounded label values would grow memory without end).
  app.addHook('onResponse', (request, reply, done) => {
    metrics.httpRequest(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  installSecurityHeaders(app, config.baseUrl.startsWith('https:'));
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    done(null, payload);
  });
  await app.register(cookie);
  // The take-over relay (decisions §21): messages over 4 MB close the socket (1009). The relay checks
  // every message's UTF-8 itself (a frame as the SDK spells it is ASCII by its check; anything else
  // goes through isUtf8, 1007), so ws does not read each 68 kB frame once more for it.
  await app.register(websocket, { options: { maxPayload: MAX_MESSAGE_BYTES, skipUTF8Validation: true, perMessageDeflate: false } });
  relay.listen(app.server);
  app.addHook('onListen', async () => relay.start());
  app.addHook('preClose', () => services.relay.stop());
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Mandate', version: '0.1.0', description: API_DESCRIPTION },
      servers: [{ url: config.baseUrl }],
    },
  });
  await registerRoutes(app, services);
  // Every node schedules it; only the holder of the lease in the shared store does the work. Stopped
  // in preClose, while the store is still open, so that the lease is handed back on shutdown.
  const housekeeping = scheduleHousekeeping(store, clock, {
    intervalMs: config.housekeepingIntervalSec * 1000,
    log: app.log,
    // Take-overs whose ten minutes ran out with nobody connected end here, with their Activity record.
    sweeps: { takeoversExpired: () => takeovers.expireDue() },
  });
  app.addHook('preClose', () => housekeeping.stop());
  app.addHook('onClose', () => proofSignatures.close());
  // Streams never end by themselves: the app's close ends them (before the store closes).
  app.addHook('preClose', () => revocationEvents.close());
  closeUnusedConnectionsOnClose(app);
  if (ownsStore) app.addHook('onClose', () => store.close());
  return { app, services };
}
