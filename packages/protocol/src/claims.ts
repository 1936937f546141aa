/**
 * Claim sets of the tokens in the protocol (interface.md "Resources", decisions.md §5).
 *
 * Every service-signed token carries its kind twice: in the JOSE header `typ` and in the `type`
 * claim. Verifiers check both, so a token of one kind never verifies as another even if one of
 * the two markers were ever minted wrong.
 */

/** Header typ of a pass (RFC 9068 access token). */
export const PASS_TYP = 'at+jwt';
/** Header typ of a step-up token. */
export const STEPUP_TYP = 'stepup+jwt';
/** Header typ of the JWT inside a revocation snapshot. */
export const REVOCATION_TYP = 'revocation+jwt';
/** Header typ of a DPoP proof (RFC 9449 §4.2). */
export const DPOP_TYP = 'dpop+jwt';

/** Confirmation: the RFC 7638 thumbprint of the agent key, twice (ours and RFC 9449's name). */
export type Confirmation = { dpop: string; jkt: string };

/** Access token ("pass"), header typ `at+jwt`. */
export type PassClaims = {
  iss: string;
  /** Agent id. */
  sub: string;
  /** Site id. */
  aud: string;
  /** The person's stable user id. */
  user: string;
  scope: string[];
  user_info?: Record<string, string>;
  cnf: Confirmation;
  type: 'access';
  iat: number;
  exp: number;
  jti: string;
  /** Grant id the pass was minted from. */
  grant: string;
  /** Revocation sequence number when minted. */
  rev_seq: number;
};

/**
 * A pass for a protected resource such as an MCP server (decisions §28), header typ `at+jwt` as every
 * pass: `aud` is the resource URL exactly, `sub` the app's agent id, `client_id` the OAuth client. `cnf`
 * only when the token request carried a DPoP proof; without it the pass is a bearer token, accepted only
 * by resource servers (never by a site's agent verifier, which requires `cnf`).
 */
export type ResourcePassClaims = Omit<PassClaims, 'cnf'> & {
  client_id: string;
  cnf?: Confirmation;
};

/** Step-up token, header typ `stepup+jwt`; single use, 60 s. */
export type StepupClaims = {
  iss: string;
  sub: string;
  aud: string;
  user: string;
  /** The approved action(s), as the owner saw them. */
  act: string[];
  type: 'stepup';
  jti: string;
  iat: number;
  exp: number;
  cnf: Confirmation;
  /** The digest of the details the owner approved (decisions §29); absent when the request had none. */
  details_digest?: string;
};

export type RevokedAgent = { id: string; flag: string; rev_seq: number };
export type RevokedGrant = { agent: string; site: string; rev_seq: number };

/** Signed content of a revocation snapshot, header typ `revocation+jwt`. */
export type RevocationClaims = {
  type: 'revocation';
  iss: string;
  iat: number;
  rev_seq: number;
  revoked_agents: RevokedAgent[];
  revoked_grants: RevokedGrant[];
};

/** Agent JWT, signed by the agent key; iss = sub = agent id. */
export type AgentJwtClaims = {
  iss: string;
  sub: string;
  iat: number;
  exp: number;
  type: 'agent';
};

/** DPoP proof claims this package reads; other claims are ignored (decisions.md §4). */
export type DpopClaims = {
  htm: string;
  htu: string;
  iat: number;
  jti: string;
  /** Required by verifyDpopProof, optional at the signature step (RFC 9449 token requests). */
  ath?: string;
};
