import type { Verified } from './types.ts';

/** A request that passed the cheap, mode-independent checks: what either mode needs to verify it. */
export type PreparedRequest = {
  accessToken: string;
  dpop: string;
  /** Only on routes that declare an action; ignored (never sent, never used up) elsewhere. */
  stepupToken?: string;
  method: string;
  /** The full public URL the proof must sign. */
  url: string;
  scope?: string;
  /** The route's action; without `stepupToken` the request is verified as usual and then refused with stepup_required. */
  action?: string;
  /** With `action`: the `details_digest` the step-up must carry (stepup_wrong_details otherwise). */
  detailsDigest?: string;
};

/**
 * Cloud or local verification. `verify` resolves to a Verified (whose scopes and stepup the caller
 * still checks against the route) or throws: ProtocolError for a verdict, anything else for "no
 * verdict" (refused with 503).
 */
export interface Strategy {
  verify(p: PreparedRequest): Promise<Verified>;
  start(): Promise<void>;
  refresh(): Promise<void>;
  close(): void;
}
