import { type SchemaOptions, Type } from '@sinclair/typebox';
import { IdParam } from './common.ts';

/** Shapes shared by the owner's agent routes and the public agent status and reputation routes. */

export const AgentParams = IdParam('agent_id', 'ag');

/** An agent's global flag (AgentFlag of the store). */
export const AgentFlag = (options?: SchemaOptions) =>
  Type.Union([Type.Literal('ok'), Type.Literal('suspicious'), Type.Literal('revoked')], options);
