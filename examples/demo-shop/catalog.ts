import { randomBytes } from 'node:crypto';

/** The demo shop's data, in memory: a few products with stock, and the orders placed by agents. */

export type Product = { id: string; name: string; price_cents: number; stock: number };

export type Order = {
  id: string;
  product_id: string;
  product_name: string;
  quantity: number;
  total: string;
  currency: 'EUR';
  /** The person the agent bought for (Mandate's stable user id). */
  user_id: string;
  agent_id: string;
  created_at: string;
};

export const MAX_QUANTITY = 10;

export function euros(cents: number): string {
  return (cents / 100).toFixed(2);
}

export class Catalog {
  private readonly products = new Map<string, Product>([
    ['p1', { id: 'p1', name: 'Desk lamp', price_cents: 1990, stock: 5 }],
    ['p2', { id: 'p2', name: 'Notebook A5, dotted', price_cents: 450, stock: 40 }],
    ['p3', { id: 'p3', name: 'Espresso beans 1 kg', price_cents: 2400, stock: 12 }],
  ]);
  private readonly orders: Order[] = [];

  list(): { id: string; name: string; price: string; currency: 'EUR'; in_stock: number }[] {
    return [...this.products.values()].map((p) => ({ id: p.id, name: p.name, price: euros(p.price_cents), currency: 'EUR', in_stock: p.stock }));
  }

  product(id: string): Product | undefined {
    return this.products.get(id);
  }

  /** The exact step-up action the owner approves for a purchase; agents are told it in the 403 stepup_required answer. */
  checkoutAction(p: Product, quantity: number): string {
    return `buy ${quantity} x ${p.name} for ${euros(p.price_cents * quantity)} EUR`;
  }

  /**
   * What the owner reads on the step-up card of a purchase (the `summary` of the stepup_required
   * answer): `1 × Desk lamp, 19.90 EUR, to Demo Shop`. The approval is bound to the checkout body itself.
   */
  checkoutSummary(p: Product, quantity: number): string {
    return `${quantity} × ${p.name}, ${euros(p.price_cents * quantity)} EUR, to Demo Shop`;
  }

  /** Places an order if the stock still allows it (it may have changed while the agent was verified). */
  place(p: Product, quantity: number, buyer: { userId: string; agentId: string }): Order | undefined {
    if (p.stock < quantity) return undefined;
    p.stock -= quantity;
    const order: Order = {
      id: `o_${randomBytes(6).toString('hex')}`,
      product_id: p.id,
      product_name: p.name,
      quantity,
      total: euros(p.price_cents * quantity),
      currency: 'EUR',
      user_id: buyer.userId,
      agent_id: buyer.agentId,
      created_at: new Date().toISOString(),
    };
    this.orders.push(order);
    return order;
  }

  ordersOf(userId: string): Order[] {
    return this.orders.filter((o) => o.user_id === userId);
  }
}
