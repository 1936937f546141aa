import type { FastifyRequest } from 'fastify';

/** The token of an `Authorization: Bearer <token>` header (scheme in any case), or undefined. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}
