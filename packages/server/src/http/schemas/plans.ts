import { Type } from '@sinclair/typebox';
import { IdParam } from './common.ts';

/** Plan shapes (decisions §20). Loose where the rule is a domain one, so the 400 names the step and the rule. */
export const PlanParams = IdParam('plan_id', 'p');

export const PlanStepIn = Type.Object({
  id: Type.Optional(Type.String({ maxLength: 100, description: '`[a-z0-9_-]{1,24}`, unique in the plan; default: the position (1-based)' })),
  url: Type.String({ maxLength: 2000, description: 'https URL of the page the step runs on' }),
  path: Type.Optional(Type.String({ maxLength: 1000, description: '"/" + printable ASCII, at most 300; a trailing `*` matches any rest. Needed for delete and unrecognised buttons' })),
  button: Type.String({ maxLength: 1000, description: 'the button label, 1 to 80 characters' }),
  texts: Type.Optional(Type.Array(Type.String({ maxLength: 20_000 }), { maxItems: 100, description: 'at most 4 texts of 1 to 10000 characters the click sends; needed for publish buttons. Stored only as digests' })),
  after: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100, description: 'ids of earlier steps that must be `done` first' })),
  uses: Type.Optional(Type.Integer({ description: '1 to 5 (default 1)' })),
}, { additionalProperties: false });

export const PlanIn = Type.Object({
  agent_id: Type.String({ maxLength: 200 }),
  agent_jwt: Type.String({ maxLength: 16384 }),
  title: Type.String({ maxLength: 1000, description: '1 to 80 characters, shown to the owner' }),
  start_at: Type.Integer({ description: 'Unix seconds: from now − 60 to now + 30 days' }),
  end_at: Type.Integer({ description: 'Unix seconds: 60 s to 24 h after start_at' }),
  steps: Type.Array(PlanStepIn, { maxItems: 100, description: '1 to 20 steps' }),
});

export const AgentOnlyIn = Type.Object({ agent_id: Type.String({ maxLength: 200 }), agent_jwt: Type.String({ maxLength: 16384 }) });

export const PlanResultIn = Type.Object({
  agent_id: Type.String({ maxLength: 200 }),
  agent_jwt: Type.String({ maxLength: 16384 }),
  txn_id: Type.String({ maxLength: 64, description: 'the agent approval that the plan step covered' }),
  result: Type.Union([Type.Literal('done'), Type.Literal('failed'), Type.Literal('unknown')]),
});

export const PlanCreatedOut = Type.Object({
  plan_id: Type.String({ description: 'plan id (`p_`)' }),
  txn_id: Type.String({ description: 'the owner\'s card (a request of kind `plan`)' }),
  status: Type.Literal('pending'),
  expires_in: Type.Integer({ description: 'seconds the owner has to answer the card' }),
});

const StepState = Type.Union(['waiting', 'asking', 'running', 'done', 'failed', 'unknown', 'skipped', 'denied'].map((s) => Type.Literal(s)));

export const PlanStepOut = Type.Object({
  id: Type.String(),
  button: Type.String(),
  state: StepState,
  approved: Type.Boolean({ description: 'pre-approved by the owner' }),
  uses_left: Type.Integer({ description: 'pre-approved uses left (0 for a step that asks)' }),
  pre_approvable: Type.Boolean({ description: 'false for money and security steps, which always ask' }),
  url: Type.String({ description: 'the page the step runs on' }),
  reason: Type.Optional(Type.String()),
});

export const PlanOut = Type.Object({
  plan_id: Type.String(),
  title: Type.String(),
  status: Type.Union(['pending', 'approved', 'denied', 'withdrawn', 'expired'].map((s) => Type.Literal(s))),
  start_at: Type.Integer(),
  end_at: Type.Integer(),
  steps: Type.Array(PlanStepOut),
});

export const OwnerPlanOut = Type.Intersect([PlanOut, Type.Object({ agent_id: Type.String(), txn_id: Type.String() })]);
