import { SCOPE_PATTERN, isDetailsDigest, isDetailsSummary, isValidAction } from '@mandate/protocol';
import { CloudStrategy } from './cloud.ts';
import { type VerifierOptions, parseOptions } from './config.ts';
import { LocalStrategy } from './local/local-strategy.ts';
import { replayCacheFrom } from './local/replay-cache.ts';
import { publicUrl } from './public-url.ts';
import { type ReportKind, type ReportResult, sendReport } from './report.ts';
import { MAX_TOKEN_LENGTH, accessTokenOf, header, stepupTokenOf } from './request.ts';
import { insufficientScope, refuse, refusalFor, stepupRequired, unauthorized } from './results.ts';
import type { PreparedRequest, Strategy } from './strategy.ts';
import type { MandateRequest, Mode, Refused, RouteRequirements, VerifyResult } from './types.ts';

export type VerifierStatus = {
  mode: Mode;
  site: string;
  /** Local mode: whether requests can be verified now (keys held, revocation list within max_stale). Cloud mode: always true. */
  ready: boolean;
  /** Local mode only. */
  keys?: number;
  revSeq?: number;
  /**
   * Local mode: seconds since the held revocation list was known current (signed, or a delta or
   * keep-alive of the event stream); `max_stale` is judged on this.
   */
  revocationAgeSec?: number;
  /**
   * Local mode: how revocations reach this verifier now. `stream`: the event stream is connected and
   * in step (a revocation is refused within a second). `polling`: every `revTtlSec` (`revocation:
   * 'poll'`, or while the stream is down or not offered).
   */
  revocationVia?: 'stream' | 'polling';
};

export interface Verifier {
  readonly mode: Mode;
  readonly site: string;
  /**
   * Verifies one agent request against the site rules. Never throws for anything the request
   * carries; resolves to `{ok: true, ...}` or to a refusal whose `status` and `error` you send back.
   */
  verify(request: MandateRequest, route?: RouteRequirements): Promise<VerifyResult>;
  /** `POST /api/v1/reports`: how an agent behaved here. Never throws. */
  report(accessToken: string, kind: ReportKind, detail?: string): Promise<ReportResult>;
  /**
   * Local mode: loads keys and revocation list, then follows the revocation event stream (polling every
   * rev_ttl while it is down, or always with `revocation: 'poll'`); rejects if the first load fails
   * (stream and polling go on). Cloud mode: nothing to do.
   */
  start(): Promise<void>;
  /** Local mode: polls now (keys when due, revocation list). Cloud mode: nothing to do. */
  refresh(): Promise<void>;
  status(): VerifierStatus;
  /** Stops polling and ends the revocation stream; nothing is left to keep the process alive. */
  close(): void;
}

/** Throws for a route declared with a scope no pass could carry: a bug of the site, found at start-up. */
export function checkScope(scope: string | undefined): void {
  if (scope !== undefined && !SCOPE_PATTERN.test(scope)) {
    throw new TypeError(`scope ${JSON.stringify(scope)} is not a valid scope (1 to 64 characters of a-z 0-9 _ : . -)`);
  }
}

type Prepared = { ok: true; request: PreparedRequest };

/**
 * The mode-independent checks, none of which calls Mandate or uses anything up: headers present and
 * of sane size, the public URL rebuilt, and the step-up header well-formed when present. A missing
 * step-up is not answered here: the pass is verified and its scope checked first (site rules 1 and 2),
 * so the owner is never asked to approve an action that cannot succeed.
 */
function prepare(request: MandateRequest, route: RouteRequirements, rebuild: (r: MandateRequest) => ReturnType<typeof publicUrl>): Prepared | Refused {
  const { action, scope, detailsDigest, summary } = route;
  if (action !== undefined && !isValidAction(action)) {
    return refuse(400, 'invalid_request', 'the action of this request is not a valid step-up action (1 to 200 printable characters)');
  }
  if (summary !== undefined && !isDetailsSummary(summary)) {
    return refuse(400, 'invalid_request', 'the summary of this request is not a valid details summary (1 to 500 printable characters)');
  }
  if (detailsDigest !== undefined && !isDetailsDigest(detailsDigest)) {
    return refuse(400, 'invalid_request', 'the details digest of this request is not base64url SHA-256 (43 characters)');
  }
  const method = request.method;
  if (typeof method !== 'string' || !/^[A-Za-z]{1,16}$/.test(method)) return unauthorized('invalid_request', 'the request method is malformed');

  const accessToken = accessTokenOf(request.headers);
  if (accessToken === undefined) return unauthorized('invalid_request', 'no Mandate pass in this request: send Authorization: Bearer <pass> and DPoP: <proof>');
  if (accessToken.length > MAX_TOKEN_LENGTH) return unauthorized('invalid_token', 'the access token is too long');

  const dpop = header(request.headers, 'dpop');
  if (dpop.kind === 'none') return unauthorized('invalid_dpop', 'the DPoP proof is missing');
  if (dpop.kind === 'many') return unauthorized('invalid_dpop', 'send exactly one DPoP proof');
  if (dpop.value.length > MAX_TOKEN_LENGTH) return unauthorized('invalid_dpop', 'the DPoP proof is too long');

  const url = rebuild(request);
  if (!url.ok) return unauthorized('invalid_request', url.description);

  const prepared: PreparedRequest = { accessToken, dpop: dpop.value, method, url: url.url };
  if (scope !== undefined) prepared.scope = scope;
  if (action !== undefined) {
    prepared.action = action; // without a step-up token: verified, scope checked, then stepup_required
    if (detailsDigest !== undefined) prepared.detailsDigest = detailsDigest;
    const stepup = stepupTokenOf(request.headers);
    if (stepup.kind === 'many') return unauthorized('stepup_invalid', 'send exactly one step-up token, in X-Service-Stepup (or X-AuthYourAgent-Stepup)');
    if (stepup.kind === 'one') {
      if (stepup.value.length > MAX_TOKEN_LENGTH) return unauthorized('stepup_invalid', 'the step-up token is too long');
      prepared.stepupToken = stepup.value;
    }
  }
  return { ok: true, request: prepared };
}

/**
 * Creates a verifier for your site. Cloud mode asks Mandate about every request; local mode checks
 * passes itself (keys and revocation list fetched and refreshed in the background) and asks Mandate
 * only to use up step-ups. Both give the same answers.
 */
export function createVerifier(options: VerifierOptions): Verifier {
  const config = parseOptions(options);
  const replayCache = replayCacheFrom(options.replayCache); // validated in either mode: a bad value is a bug of the site
  const local = config.mode === 'local' ? new LocalStrategy(config, replayCache) : undefined;
  const strategy: Strategy = local ?? new CloudStrategy(config);
  const rebuild = (r: MandateRequest) => publicUrl(r, config);

  return {
    mode: config.mode,
    site: config.site,

    async verify(request, route = {}) {
      checkScope(route.scope);
      try {
        const prepared = prepare(request, route, rebuild);
        if (!prepared.ok) return prepared;
        const p = prepared.request;
        const verified = await strategy.verify(p);
        // The scope before the step-up: a pass without the scope neither spends a step-up nor is told
        // to ask its owner for one (stepup_required), since the action could not succeed anyway.
        if (p.scope !== undefined && !verified.scopes.includes(p.scope)) return insufficientScope(p.scope);
        if (p.action !== undefined && !verified.stepup) return stepupRequired(p.action, route.summary);
        return verified;
      } catch (e) {
        return refusalFor(e, config.onError);
      }
    },

    report: (accessToken, kind, detail) => sendReport(config, accessToken, kind, detail),
    start: () => strategy.start(),
    refresh: () => strategy.refresh(),
    close: () => strategy.close(),

    status() {
      if (local === undefined) return { mode: config.mode, site: config.site, ready: true };
      const revSeq = local.revocation.revSeq;
      const age = local.revocation.ageSec();
      return {
        mode: config.mode,
        site: config.site,
        ready: local.keys.loaded && local.revocation.fresh() !== undefined,
        keys: local.keys.size,
        ...(revSeq === undefined ? {} : { revSeq }),
        ...(Number.isFinite(age) ? { revocationAgeSec: age } : {}),
        revocationVia: local.revocationVia,
      };
    },
  };
}
