import express, { type NextFunction, type Request, type Response } from 'express';
import type { Verifier } from '@mandate/site';
import { requireAgent } from '@mandate/site/express';
import { Catalog, MAX_QUANTITY, type Product } from './catalog.ts';
import { shopOpenApi } from './openapi.ts';

/**
 * The demo shop's routes. Agents need a pass with:
 *   GET  /products   scope `list`
 *   GET  /orders     scope `orders:read`  (the orders of the person the agent acts for)
 *   POST /checkout   scope `checkout` and a step-up for "buy <quantity> x <product name> for <total> EUR"
 *                    bound to the body {"product_id": "p1", "quantity": 1} (its JCS digest); the owner
 *                    reads "1 × Desk lamp, 19.90 EUR, to Demo Shop"
 * Public: GET / (what this is), GET /healthz and GET /openapi.json (the routes above, marked x-mandate).
 */

type CheckoutLocals = { product: Product; quantity: number };

/** The checkout body `{product_id, quantity?}`, or what is wrong with it. */
function readCheckout(body: unknown): { productId: string; quantity: number } | string {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const productId = fields['product_id'];
  const quantity = fields['quantity'] ?? 1;
  if (typeof productId !== 'string') return 'send {"product_id": "p1", "quantity": 1}';
  if (typeof quantity !== 'number' || !Number.isInteger(quantity) || quantity < 1 || quantity > MAX_QUANTITY) return `quantity must be 1 to ${MAX_QUANTITY}`;
  return { productId, quantity };
}

export type ShopAppOptions = {
  /** How agents reach the shop (PUBLIC_BASE_URL): the description's server URL. */
  publicBaseUrl?: string;
  catalog?: Catalog;
};

export function createShopApp(verifier: Verifier, o: ShopAppOptions = {}) {
  const catalog = o.catalog ?? new Catalog();
  const description = shopOpenApi(o.publicBaseUrl);
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '10kb' }));

  app.get('/', (_req, res) => {
    res.json({
      shop: 'Mandate demo shop',
      site: verifier.site,
      mode: verifier.mode,
      routes: {
        'GET /products': { scope: 'list' },
        'GET /orders': { scope: 'orders:read' },
        'POST /checkout': {
          scope: 'checkout',
          body: { product_id: 'string', quantity: `1..${MAX_QUANTITY}` },
          stepup: 'buy <quantity> x <product name> for <total> EUR',
          stepup_bound_to: 'the body: details.digest = base64url SHA-256 of its RFC 8785 canonical JSON',
        },
      },
    });
  });

  app.get('/openapi.json', (_req, res) => {
    res.json(description);
  });

  app.get('/healthz', (_req, res) => {
    const status = verifier.status();
    res.status(status.ready ? 200 : 503).json(status);
  });

  app.get('/products', requireAgent(verifier, { scope: 'list' }), (req, res) => {
    res.json({ products: catalog.list(), agent: { id: req.mandate?.agentId, name: req.mandate?.agentName } });
  });

  app.get('/orders', requireAgent(verifier, { scope: 'orders:read' }), (req, res) => {
    res.json({ orders: catalog.ordersOf(req.mandate?.userId ?? '') });
  });

  // Cheap checks first: a step-up is used up the moment verification accepts it, so whatever could
  // still fail for a reason we can see now (bad body, unknown product, no stock) is checked before.
  const findProduct = (req: Request, res: Response<unknown, CheckoutLocals>, next: NextFunction) => {
    const wanted = readCheckout(req.body);
    if (typeof wanted === 'string') return void res.status(400).json({ error: 'invalid_request', error_description: wanted });
    const product = catalog.product(wanted.productId);
    if (!product) return void res.status(404).json({ error: 'not_found', error_description: `no product ${wanted.productId}` });
    if (product.stock < wanted.quantity) return void res.status(409).json({ error: 'out_of_stock', error_description: `only ${product.stock} left` });
    res.locals.product = product;
    res.locals.quantity = wanted.quantity;
    next();
  };
  const locals = (req: Request): CheckoutLocals => (req.res as Response<unknown, CheckoutLocals>).locals;

  app.post(
    '/checkout',
    findProduct,
    // The owner approves this very basket: a step-up approved for another body is refused (403 stepup_wrong_details).
    requireAgent(verifier, {
      scope: 'checkout',
      action: (req) => catalog.checkoutAction(locals(req).product, locals(req).quantity),
      bindBody: true,
      summary: (req) => catalog.checkoutSummary(locals(req).product, locals(req).quantity),
    }),
    (req: Request, res: Response<unknown, CheckoutLocals>) => {
      const { product, quantity } = res.locals;
      const order = catalog.place(product, quantity, { userId: req.mandate?.userId ?? '', agentId: req.mandate?.agentId ?? '' });
      if (!order) return void res.status(409).json({ error: 'out_of_stock', error_description: 'sold out while your request was verified' });
      res.status(201).json({ order });
    },
  );

  app.use((_req, res) => {
    res.status(404).json({ error: 'not_found' });
  });

  // Unreadable bodies are the client's error; anything else is ours, without details.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = typeof err === 'object' && err !== null && 'status' in err && typeof err.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 500;
    res.status(status).json(status === 500 ? { error: 'internal_error' } : { error: 'invalid_request', error_description: 'the request body cannot be read' });
  });

  return app;
}
