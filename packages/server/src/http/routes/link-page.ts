import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { answerLinkPreview, type LinkPage } from './owner/email-pages.ts';

/** The `token` a mailed link carries, as a confirmation's body takes it. */
export const LinkToken = Type.String({ minLength: 1, maxLength: 200, description: 'the `token` of the mailed link' });

/** A GET page behind a mailed link: what it is for, how it reads the link, what it shows. */
export interface LinkPageRoute<T> {
  path: string;
  summary: string;
  description: string;
  /** OpenAPI tags; default `owner`. */
  tags?: string[];
  /** How the query's `token` is described; default "the `token` of the mailed link". */
  tokenDescription?: string;
  /** The title of a refusal page. */
  title: string;
  /** Reads the link without using it (mail scanners open links); undefined for a bad link. */
  preview: (token: string, ip: string) => Promise<T | undefined>;
  /** The JSON `detail` of a bad link, for a client that does not ask for HTML. */
  badDetail: string;
  badPage: LinkPage;
  /** The page for a good link; its form POSTs `token`. */
  page: (shown: T, token: string) => LinkPage;
}

/**
 * Declares the GET behind a mailed link (password reset, email verification, address claim, passkey
 * undo): one schema (an optional `token` query, an HTML answer) and one answer (answerLinkPreview),
 * so the link pages cannot drift apart. A missing token reads as an empty one: a bad link.
 */
export function linkPageRoute<T>(scope: FastifyInstance, route: LinkPageRoute<T>): void {
  const LinkQuery = Type.Object({ token: Type.Optional(Type.String({ maxLength: 200, description: route.tokenDescription ?? 'the `token` of the mailed link' })) });
  scope.withTypeProvider<TypeBoxTypeProvider>().get(route.path, {
    schema: {
      summary: route.summary,
      description: route.description,
      tags: route.tags ?? ['owner'],
      querystring: LinkQuery,
      produces: ['text/html'],
      response: { 200: Type.String({ description: 'an HTML page' }) },
    },
  }, async (request, reply) => {
    const token = request.query.token ?? '';
    return answerLinkPreview(reply, request.headers.accept, {
      title: route.title,
      preview: () => route.preview(token, request.ip),
      badDetail: route.badDetail,
      badPage: route.badPage,
      page: (shown) => route.page(shown, token),
    });
  });
}
