/**
 * `POST /api/v1/operator/token` (decisions §17): the operator trades a consent's code, within 60 s
 * and once, for the connection. The code is spent by one conditional UPDATE (of racing callers
 * exactly one wins), then must match the operator, the exact redirect URI and the PKCE challenge
 * (S256 of code_verifier, compared in constant time). A reuse of a spent code by its operator ends
 * the connection that code answered (the code may have been copied). Consent while a live connection
 * exists answers that same connection (one live connection per operator and person). No HTTP.
 */
import { CODE_VERIFIER, s256Matches } from '../../crypto/pkce.ts';
import type { Clock } from '../../clock.ts';
import type { OidcSecret } from '../../crypto/oidc-secret.ts';
import type { ConnectionRecord, OperatorRecord, Store } from '../../store/ports/index.ts';
import type { Activity } from '../activity/activity.ts';
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import { DEFAULT_MAX_AGENTS, hashCode } from './codes.ts';
import type { ConnectionLifecycle } from './connection-lifecycle.ts';

export interface CodeExchangeIn {
  code: string;
  codeVerifier: string;
  redirectUri: string;
}

export interface CodeExchangeDeps {
  store: Store;
  clock: Clock;
  activity: Activity;
  secret: OidcSecret;
  /** Ends a connection with every effect on its agents (connection-lifecycle.ts). */
  lifecycle: Pick<ConnectionLifecycle, 'end'>;
}

const CODE = /^[A-Za-z0-9_-]{1,200}$/;

const invalidGrant = (detail: string) => new AppError(400, detail, { error: 'invalid_grant' });
const SPENT = 'code unknown, expired (codes last 60 seconds) or already used: ask the person to connect again';

/** The person as this operator knows them: pairwise per operator (the OIDC secret's HMAC). */
export const operatorSub = (secret: OidcSecret, operatorId: string, userId: string): string => secret.pairwise(`operator:${operatorId}`, userId);

export async function exchangeCode(d: CodeExchangeDeps, operator: OperatorRecord, input: CodeExchangeIn, ip: string | null): Promise<ConnectionRecord> {
  if (!CODE.test(input.code)) throw invalidGrant('code is malformed: send the code your redirect URI received, as received');
  if (!CODE_VERIFIER.test(input.codeVerifier)) throw invalidGrant('code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636)');
  const codeHash = hashCode(input.code);
  const now = d.clock.now();
  const outcome = await d.store.transaction(async (repos) => {
    const code = await repos.connections.spendCode(codeHash, now);
    if (!code) return { kind: 'spent' as const };
    if (code.operatorId !== operator.id || code.redirectUri !== input.redirectUri || !s256Matches(input.codeVerifier, code.codeChallenge)) {
      return { kind: 'mismatch' as const };
    }
    const id = newId('cn');
    const connection = await repos.connections.createOrLive({
      id, operatorId: operator.id, userId: code.userId, sub: operatorSub(d.secret, operator.id, code.userId),
      maxAgents: DEFAULT_MAX_AGENTS, status: 'active', createdAt: now, endedAt: null,
    });
    await repos.connections.linkCode(codeHash, connection.id);
    if (connection.id === id) {
      await d.activity.record({ userId: code.userId, action: 'operator.connected', detail: { operator_id: operator.id, name: operator.name, domain: operator.domain, connection_id: connection.id, max_agents: connection.maxAgents }, ip }, repos.activity);
    }
    return { kind: 'connected' as const, connection };
  });
  if (outcome.kind === 'connected') return outcome.connection;
  if (outcome.kind === 'mismatch') throw invalidGrant('code, redirect_uri or code_verifier do not match the consent; the code is now spent: ask the person to connect again');
  await endOnReuse(d, operator, codeHash, ip);
  throw invalidGrant(SPENT);
}

/**
 * A spent code presented again by its own operator ends the connection it answered, with its agents
 * removed as any end removes them (the copied code may have made some).
 */
async function endOnReuse(d: CodeExchangeDeps, operator: OperatorRecord, codeHash: string, ip: string | null): Promise<void> {
  const code = await d.store.connections.codeByHash(codeHash);
  if (!code || code.usedAt === null || code.connectionId === null || code.operatorId !== operator.id) return;
  const connection = await d.store.connections.byId(code.connectionId);
  if (connection) await d.lifecycle.end(connection, 'code_reused', ip, operator);
}
