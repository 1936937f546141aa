import { Type } from '@sinclair/typebox';
import type { AgentApprovalDetails } from '../../store/ports/index.ts';
import { categoryOf } from '../../domain/modes/category.ts';

const SUMMARY_DESCRIPTION = 'what the owner approves, shown on the card as written (lines kept): 1 to 500 printable characters';
const DIGEST_DESCRIPTION = 'base64url SHA-256 (43 characters) of the RFC 8785 (JCS) canonical JSON of what is approved, e.g. the request body';

/**
 * The details a step-up is bound to (decisions §29), as the agent sends them: the types here, the
 * lengths and characters in the domain (400 naming the field).
 */
export const BoundDetailsIn = Type.Object({
  summary: Type.String({ maxLength: 4000, description: SUMMARY_DESCRIPTION }),
  digest: Type.String({ maxLength: 200, description: DIGEST_DESCRIPTION }),
}, { description: 'the details the approval is bound to: the passkey challenge and the step-up token commit to `digest`' });

export const BoundDetailsOut = Type.Object({
  summary: Type.String({ description: 'shown as written: text, never HTML; line feeds are line breaks' }),
  digest: Type.String({ description: 'base64url SHA-256 of the JCS form of the details; the step-up token carries it as `details_digest`' }),
}, { description: 'decisions §29: the approval is bound to exactly these details' });

/** `details` of a step-up, for the answers that show requests; nothing for a step-up without them. */
export function boundDetailsOut(r: { boundDetails?: { summary: string; digest: string } | null | undefined }): { details?: { summary: string; digest: string } } {
  return r.boundDetails ? { details: { summary: r.boundDetails.summary, digest: r.boundDetails.digest } } : {};
}

/** The `details` of an agent approval as the agent sends them; sizes and formats are checked by the domain. */
export const AgentApprovalDetailsIn = Type.Object({
  label: Type.Optional(Type.String({ maxLength: 2000, description: 'the button or link text; cut to 80 characters' })),
  amount: Type.Optional(Type.String({ maxLength: 2000, description: 'cut to 40 characters' })),
  item: Type.Optional(Type.String({ maxLength: 2000, description: 'cut to 120 characters' })),
  page: Type.Optional(Type.String({ maxLength: 2000, description: 'the page title; cut to 200 characters' })),
  host: Type.Optional(Type.String({ maxLength: 1000, description: 'the host of the page' })),
  target_host: Type.Optional(Type.String({ maxLength: 1000, description: 'the host a form posts to' })),
  path: Type.Optional(Type.String({ maxLength: 1000, description: '`/` + printable ASCII, at most 300' })),
  card_fields: Type.Optional(Type.Boolean({ description: 'the form has payment card fields' })),
  password_fields: Type.Optional(Type.Boolean({ description: 'the form has password fields' })),
  text_digests: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100, description: 'at most 8 SHA-256 digests (64 lower-case hex)' })),
  summary: Type.Optional(Type.String({ maxLength: 4000, description: `with \`digest\`: ${SUMMARY_DESCRIPTION}` })),
  digest: Type.Optional(Type.String({ maxLength: 200, description: `with \`summary\`: ${DIGEST_DESCRIPTION}; the passkey challenge commits to it` })),
}, { description: 'what the action is about, shown on the owner\'s card' });

export const AgentApprovalDetailsOut = Type.Object({
  label: Type.Optional(Type.String()),
  amount: Type.Optional(Type.String()),
  item: Type.Optional(Type.String()),
  page: Type.Optional(Type.String()),
  host: Type.Optional(Type.String()),
  target_host: Type.Optional(Type.String()),
  path: Type.Optional(Type.String()),
  card_fields: Type.Optional(Type.Boolean()),
  password_fields: Type.Optional(Type.Boolean()),
  text_digests: Type.Optional(Type.Array(Type.String())),
  summary: Type.Optional(Type.String({ description: 'the bound details (decisions §29): shown as written' })),
  digest: Type.Optional(Type.String({ description: 'the bound details\' digest' })),
});

export const CategoryOut = Type.Union(['money', 'security', 'delete', 'publish', 'unknown', 'low'].map((c) => Type.Literal(c)), {
  description: 'decisions §19: what the action is likely to do, from its label (else action) and the form',
});

/** `details` and `category` of an agent approval, for the answers that show requests. */
export function agentApprovalOut(r: { kind: string; action: string | null; details?: AgentApprovalDetails | null | undefined; boundDetails?: { summary: string; digest: string } | null | undefined }): { details?: AgentApprovalDetails; category?: ReturnType<typeof categoryOf> } {
  if (r.kind === 'stepup') return boundDetailsOut(r);
  if (r.kind !== 'agent_approval') return {};
  const details = r.details ?? {};
  return { details: { ...details, ...boundDetailsOut(r).details }, category: categoryOf({ action: r.action ?? '', ...details }) };
}
