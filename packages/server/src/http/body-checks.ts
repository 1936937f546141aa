import type { FastifyRequest } from 'fastify';
import { actionProblem, scopesProblem, siteProblem } from '../domain/approvals/request-rules.ts';
import { looksLikeId } from '../domain/ids.ts';
import type { ValidationItem } from './validation.ts';

/**
 * The domain's shape checks of an agent body (the agent id's form, the site, the scopes, the
 * action), run only when the body's schema already failed: the 422 then lists every problem of
 * the body at once instead of one per attempt (issue 27). A body the schema accepts is answered as
 * before: the domain checks these again and answers 401 or 400 with its `detail`.
 */
export type BodyChecks = (body: unknown) => ValidationItem[];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Extra problems of the body, added to a schema's 422 (http/errors.ts). */
    bodyChecks?: BodyChecks;
  }
}

type Field = 'agent_id' | 'site' | 'scopes' | 'action';

const AGENT_ID_PROBLEM = 'not an agent id: agent ids read ag_ then lower-case letters and digits (the id the owner app shows)';

function problemOf(field: Field, value: unknown): string | null {
  switch (field) {
    case 'agent_id':
      return typeof value === 'string' && !looksLikeId('ag', value) ? AGENT_ID_PROBLEM : null;
    case 'site':
      return typeof value === 'string' ? siteProblem(value) : null;
    case 'action':
      return typeof value === 'string' ? actionProblem(value) : null;
    case 'scopes':
      return Array.isArray(value) && value.every((v): v is string => typeof v === 'string') ? scopesProblem(value) : null;
  }
}

/** Checks of `fields` of an agent body; a field that is missing or of the wrong type is left to the schema. */
export function agentBodyChecks(...fields: Field[]): BodyChecks {
  return (body) => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return [];
    const b = body as Record<string, unknown>;
    const items: ValidationItem[] = [];
    for (const field of fields) {
      const msg = problemOf(field, b[field]);
      if (msg !== null) items.push({ loc: ['body', field], msg, type: `invalid_${field}` });
    }
    return items;
  };
}

/** The route's extra body problems, minus those at a place the schema already reported. */
export function extraBodyProblems(request: FastifyRequest, reported: readonly ValidationItem[]): ValidationItem[] {
  const checks = request.routeOptions.config.bodyChecks;
  if (!checks) return [];
  const seen = new Set(reported.map((i) => JSON.stringify(i.loc)));
  return checks(request.body).filter((i) => !seen.has(JSON.stringify(i.loc)));
}
