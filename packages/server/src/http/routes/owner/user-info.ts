import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Services } from '../../../services.ts';
import { USER_INFO_FIELDS, availableUserInfoFields } from '../../../domain/user-info.ts';
import { withErrors } from '../../schemas/common.ts';

const FieldsOut = Type.Object({
  fields: Type.Array(Type.Object({ name: Type.String(), description: Type.String() })),
});

export async function userInfoRoutes(base: FastifyInstance, s: Services): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/user-info/fields', {
    schema: {
      summary: 'Registry of requestable user-info fields',
      description: 'With an owner session: the fields this owner can approve (`user:name`; `user:email` only once the owner verified the address by the mailed link, POST /api/email/send; `user:phone` only once the owner verified a phone); an access request for any other field gets 400. Without a session: every field the service knows.',
      tags: ['grants'],
      response: withErrors({ 200: FieldsOut }, 401),
    },
  }, async (request) => {
    const owner = await s.auth.optional(request);
    const fields = owner ? availableUserInfoFields(owner.user) : USER_INFO_FIELDS;
    return { fields: fields.map((f) => ({ name: f.name, description: f.description })) };
  });
}
