import { Type } from '@sinclair/typebox';
import { iso, isoOrNull } from '../../../clock.ts';
import type { OperatorView } from '../../../domain/operators/operators.ts';
import { Timestamp } from '../../schemas/common.ts';

/** An operator as its owner and the admin see it: never its secret or the secret's hash. */
export const OperatorOut = Type.Object({
  id: Type.String({ description: 'operator id (`op_`)' }),
  name: Type.String(),
  domain: Type.String({ description: 'host[:port] of the redirect URIs' }),
  redirect_uris: Type.Array(Type.String()),
  browser: Type.Union([Type.Literal('operator'), Type.Literal('user')], { description: '`operator`: the agents\' browser runs on the operator\'s computers; `user`: on the user\'s own machine through a remote vault' }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('active'), Type.Literal('disabled')], { description: '`pending` until an admin first switches it on; then `active` (on) or `disabled` (off)' }),
  verified: Type.Boolean({ description: 'the domain held the verification line at a check' }),
  verified_at: Type.Union([Timestamp, Type.Null()]),
  verification: Type.Object({
    url: Type.String({ description: '`<scheme>://<host[:port]>/.well-known/service-site.txt` of the redirect URIs' }),
    line: Type.String({ description: '`mandate-operator=<op_id>:<token>`, to publish on a line of its own' }),
  }),
  secret_set_at: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const operatorOut = ({ operator: o, verification }: OperatorView) => ({
  id: o.id,
  name: o.name,
  domain: o.domain,
  redirect_uris: o.redirectUris,
  browser: o.browser,
  status: o.status,
  verified: o.verifiedAt !== null,
  verified_at: isoOrNull(o.verifiedAt),
  verification,
  secret_set_at: iso(o.secretSetAt),
  created_at: iso(o.createdAt),
  updated_at: iso(o.updatedAt),
});
