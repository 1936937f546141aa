import { Type } from '@sinclair/typebox';
import type { AgentApprovalDetails } from '../../store/ports/index.ts';
import { categoryOf } from '../../domain/modes/category.ts';

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
});

export const CategoryOut = Type.Union(['money', 'security', 'delete', 'publish', 'unknown', 'low'].map((c) => Type.Literal(c)), {
  description: 'decisions §19: what the action is likely to do, from its label (else action) and the form',
});

/** `details` and `category` of an agent approval, for the answers that show requests. */
export function agentApprovalOut(r: { kind: string; action: string | null; details?: AgentApprovalDetails | null | undefined }): { details?: AgentApprovalDetails; category?: ReturnType<typeof categoryOf> } {
  if (r.kind !== 'agent_approval') return {};
  const details = r.details ?? {};
  return { details, category: categoryOf({ action: r.action ?? '', ...details }) };
}
