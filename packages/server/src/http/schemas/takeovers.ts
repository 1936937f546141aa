import { Type } from '@sinclair/typebox';
import { ReadableLine, ReadableText, Timestamp } from './common.ts';

export const TAKEOVER_REPORT_KINDS = ['shadow_dom', 'bot_detection', 'input_not_detected', 'takeover_failed', 'handback_failed', 'session_not_cleared', 'other'] as const;

/** TakeoverReportIn (decisions §21). */
export const TakeoverReportIn = Type.Object({
  agent_id: Type.String({ minLength: 1, maxLength: 64 }),
  agent_jwt: Type.String({ minLength: 1, maxLength: 8192 }),
  site: ReadableLine({ minLength: 1, maxLength: 200, description: 'the site (host) where it failed' }),
  kind: Type.Union(TAKEOVER_REPORT_KINDS.map((k) => Type.Literal(k))),
  detail: Type.Optional(ReadableText({ maxLength: 280 })),
  url: Type.Optional(ReadableLine({ maxLength: 500 })),
});

export const TakeoverOut = Type.Object({
  id: Type.String({ description: 'the session id (`tk_...`)' }),
  agent_id: Type.String(),
  url: Type.String({ description: 'the page the agent was on when it asked' }),
  reason: Type.String(),
  created_at: Timestamp,
  expires_at: Timestamp,
});

export const TakeoverReportOut = Type.Object({
  id: Type.String(),
  agent_id: Type.String(),
  site: Type.String(),
  kind: Type.String(),
  detail: Type.Union([Type.String(), Type.Null()]),
  url: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
});
