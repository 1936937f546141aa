/**
 * What a consent request (`GET /connect`, `POST /api/connect/start`; decisions §17) must hold, as a
 * pure check. Anything wrong is an error for the person's screen, never a redirect: a redirect to an
 * address that is not the operator's, or without PKCE, would hand a code to whoever asked.
 */
import type { OperatorRecord } from '../../store/ports/index.ts';
import { S256_CHALLENGE } from '../../crypto/pkce.ts';
import { badRequest, forbidden, notFound } from '../errors.ts';
import { looksLikeId } from '../ids.ts';

/** The query of `/connect`, as it arrives (every field may be missing or repeated). */
export interface ConsentQuery {
  operator?: unknown;
  redirect_uri?: unknown;
  state?: unknown;
  code_challenge?: unknown;
  code_challenge_method?: unknown;
}

/** A checked consent request: the operator, the exact registered URI, PKCE S256. */
export interface ConsentRequest {
  operator: OperatorRecord;
  redirectUri: string;
  /** Echoed to the redirect URI as sent; null when the operator sent none. */
  state: string | null;
  codeChallenge: string;
}

export const STATE_MAX = 500;
const PRINTABLE = /^[\x20-\x7e]*$/;

const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The fields that do not need the store: shapes and PKCE. */
export function consentFields(q: ConsentQuery): { operatorId: string; redirectUri: string; state: string | null; codeChallenge: string } {
  const operatorId = text(q.operator);
  if (operatorId === undefined || operatorId === '') throw badRequest('operator is missing: the link must name the operator (operator=op_...)');
  const redirectUri = text(q.redirect_uri);
  if (redirectUri === undefined || redirectUri === '') throw badRequest('redirect_uri is missing: the link must name one of the operator\'s registered redirect URIs');
  const state = q.state === undefined ? null : text(q.state);
  if (state === undefined || (state !== null && (state.length > STATE_MAX || !PRINTABLE.test(state)))) {
    throw badRequest(`state must be one string of at most ${STATE_MAX} printable ASCII characters`);
  }
  const method = q.code_challenge_method;
  if (method === undefined) throw badRequest('PKCE is required: the link must carry code_challenge and code_challenge_method=S256');
  if (method !== 'S256') throw badRequest('code_challenge_method must be S256 (plain is not accepted)');
  const codeChallenge = text(q.code_challenge);
  if (codeChallenge === undefined || !S256_CHALLENGE.test(codeChallenge)) {
    throw badRequest('code_challenge must be BASE64URL(SHA-256(code_verifier)): 43 characters of A-Z a-z 0-9 - _');
  }
  return { operatorId, redirectUri, state: state || null, codeChallenge };
}

/**
 * The operator must exist and be switched on, and the redirect URI must be one it registered,
 * compared exactly (no prefix, no normalisation).
 */
export function consentOperator(operator: OperatorRecord | undefined, redirectUri: string): OperatorRecord {
  if (!operator) throw notFound('unknown operator: the link that sent you here is wrong; nothing was connected');
  if (operator.status !== 'active') throw forbidden(`this operator is ${operator.status === 'pending' ? 'not switched on yet' : 'switched off'}; nothing was connected`);
  if (!operator.redirectUris.includes(redirectUri)) throw badRequest('redirect_uri is not one the operator registered; nothing was connected');
  return operator;
}

/** Reads the operator and checks everything; the store read is given (no I/O here). */
export async function checkConsentRequest(q: ConsentQuery, operatorById: (id: string) => Promise<OperatorRecord | undefined>): Promise<ConsentRequest> {
  const f = consentFields(q);
  const operator = consentOperator(looksLikeId('op', f.operatorId) ? await operatorById(f.operatorId) : undefined, f.redirectUri);
  return { operator, redirectUri: f.redirectUri, state: f.state, codeChallenge: f.codeChallenge };
}

