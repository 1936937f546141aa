import { MAX_QUANTITY } from './catalog.ts';

/**
 * The shop's OpenAPI description, served in public at GET /openapi.json. Each operation an agent may
 * call carries an `x-mandate` mark: the tool name, the scopes to ask for and whether each call needs
 * the owner's step-up, so `mandate-agent mcp --openapi <shop>/openapi.json` offers them as tools.
 * The server URL is the shop's public base URL; without one (behind a proxy that sets
 * X-Forwarded-*) it is `/`, which readers resolve against the description's own URL.
 */
export function shopOpenApi(publicBaseUrl: string | undefined): object {
  const error = { $ref: '#/components/responses/Error' };
  return {
    openapi: '3.1.0',
    info: { title: 'Mandate demo shop', version: '1.0.0', description: 'A small shop for AI agents acting with their owner\'s approval through Mandate.' },
    servers: [{ url: publicBaseUrl ?? '/' }],
    paths: {
      '/products': {
        get: {
          operationId: 'listProducts',
          summary: 'List the products with their prices and stock',
          'x-mandate': { name: 'list_products', scopes: ['list'], stepup: false, description: 'List the shop\'s products: id, name, price in EUR and how many are in stock.' },
          responses: { '200': { description: 'The products', content: { 'application/json': { schema: { type: 'object' } } } }, '401': error, '403': error },
        },
      },
      '/orders': {
        get: {
          operationId: 'listOrders',
          summary: 'The orders placed for the person the agent acts for',
          'x-mandate': { name: 'list_orders', scopes: ['orders:read'], stepup: false, description: 'List the orders placed for the person you act for.' },
          responses: { '200': { description: 'The orders', content: { 'application/json': { schema: { type: 'object' } } } }, '401': error, '403': error },
        },
      },
      '/checkout': {
        post: {
          operationId: 'checkout',
          summary: 'Buy a product',
          'x-mandate': { name: 'checkout', scopes: ['checkout'], stepup: true, description: 'Buy a product (product_id from list_products). The owner approves each purchase, bound to exactly this body: the call waits for them.' },
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Checkout' } } } },
          responses: {
            '201': { description: 'The order placed', content: { 'application/json': { schema: { type: 'object' } } } },
            '400': error, '401': error, '403': error, '404': error, '409': error,
          },
        },
      },
    },
    components: {
      schemas: {
        Checkout: {
          type: 'object',
          required: ['product_id'],
          additionalProperties: false,
          properties: {
            product_id: { type: 'string', description: 'The product to buy, e.g. p1' },
            quantity: { type: 'integer', minimum: 1, maximum: MAX_QUANTITY, default: 1, description: `How many, 1 to ${MAX_QUANTITY}` },
          },
        },
        Error: {
          type: 'object',
          properties: { error: { type: 'string' }, error_description: { type: 'string' }, action: { type: 'string', description: 'stepup_required: what the owner is asked to approve' }, summary: { type: 'string', description: 'stepup_required: the text the shop suggests the owner reads, e.g. "1 × Desk lamp, 19.90 EUR, to Demo Shop"' } },
        },
      },
      responses: { Error: { description: 'A refusal', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
    },
  };
}
