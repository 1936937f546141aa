import type { FastifyRequest } from 'fastify';
import type { Operators } from '../../domain/operators/operators.ts';
import { AppError, forbidden } from '../../domain/errors.ts';
import type { OperatorRecord } from '../../store/ports/index.ts';

/** Answered with every 401, so clients know to send Basic credentials. */
export const OPERATOR_CHALLENGE = 'Basic realm="operator", charset="UTF-8"';

const MAX_HEADER = 1024;

/** `op_id:secret` from an `Authorization: Basic` header, or undefined when it is not one. */
export function basicCredentials(header: unknown): { id: string; secret: string } | undefined {
  if (typeof header !== 'string' || header.length > MAX_HEADER) return undefined;
  const m = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header.trim());
  if (!m?.[1]) return undefined;
  const text = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon <= 0 || colon === text.length - 1) return undefined;
  return { id: text.slice(0, colon), secret: text.slice(colon + 1) };
}

/**
 * The operator of a request to the operator API (interface "Authentication": HTTP Basic, operator id
 * as user name, secret as password). Fails closed: a missing or malformed header, an unknown id and a
 * wrong secret are the same 401 (after the same constant-time comparison); an operator that is not
 * switched on (`pending` or `disabled`) is 403. Owner endpoints never call this, and OwnerAuth reads
 * only a Bearer token or the session cookie, so these credentials open nothing of an owner's.
 */
export async function requireOperator(operators: Pick<Operators, 'authenticate'>, request: FastifyRequest): Promise<OperatorRecord> {
  const credentials = basicCredentials(request.headers.authorization);
  const operator = credentials === undefined ? undefined : await operators.authenticate(credentials.id, credentials.secret);
  if (!operator) throw new AppError(401, 'operator authentication failed: send Authorization: Basic with base64 of op_id:secret', {}, { 'www-authenticate': OPERATOR_CHALLENGE });
  if (operator.status !== 'active') throw forbidden(`this operator is ${operator.status}: an admin must switch it on before it can use the operator API`);
  return operator;
}
