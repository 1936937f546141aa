import { isValidAction, isValidScopeList, LIMITS } from '@mandate/protocol';
import { z } from 'zod';
import { normalizeSiteId } from '../../site-id.ts';
import type { McpDeps } from '../context.ts';
import { MCP_LIMITS } from '../limits.ts';

/** Arguments several tools share, each checked where the SDK would refuse it later without naming the field. */

export const waitSecondsArg = z
  .number()
  .min(0)
  .max(MCP_LIMITS.maxWaitSeconds)
  .optional()
  .describe(`How long to wait for the owner before answering {"status": "pending", "txn_id"} (default ${MCP_LIMITS.defaultWaitSeconds}, at most ${MCP_LIMITS.maxWaitSeconds}); then call mandate_wait.`);

export function waitSecondsOf(d: McpDeps, args: { wait_seconds?: number | undefined }): number {
  return args.wait_seconds ?? d.waitSeconds;
}

export const siteArg = z
  .string()
  .max(253)
  .refine((s) => isSiteId(s), 'not a site id: a host name such as shop.example.com (with :port when not the default)')
  .describe('The site id: its host name, e.g. shop.example.com');

export const scopesArg = z
  .array(z.string())
  .refine((s) => isValidScopeList([...new Set(s)]), `1 to ${LIMITS.maxScopes} scopes, each 1 to ${LIMITS.maxScopeLength} of [a-z0-9_:.-]`)
  .describe('The scopes to ask for, e.g. ["orders:read"]');

export const actionArg = z
  .string()
  .refine((s) => isValidAction(s), `1 to ${LIMITS.actionMaxLength} printable characters`);

export const httpUrlArg = z.string().refine((s) => {
  try {
    const u = new URL(s);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}, 'an absolute http(s) URL');

function isSiteId(s: string): boolean {
  try {
    normalizeSiteId(s);
    return true;
  } catch {
    return false;
  }
}
