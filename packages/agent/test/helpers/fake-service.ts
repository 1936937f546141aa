import type { FetchLike } from '../../src/client/http.ts';

export type Recorded = { method: string; path: string; body: Record<string, unknown> | undefined; headers: Record<string, string> };
export type Reply = { status: number; body?: unknown; headers?: Record<string, string> } | Error;

/**
 * A scripted stand-in for the service: each call takes the next reply of its route (or of `*`),
 * and every request is recorded for the assertions.
 */
export class FakeService {
  readonly calls: Recorded[] = [];
  private readonly replies = new Map<string, Reply[]>();

  on(route: string, ...replies: Reply[]): this {
    this.replies.set(route, [...(this.replies.get(route) ?? []), ...replies]);
    return this;
  }

  callsTo(route: string): Recorded[] {
    return this.calls.filter((c) => `${c.method} ${c.path.split('?')[0]}` === route);
  }

  readonly fetch: FetchLike = async (input, init) => {
    const url = new URL(String(input));
    const method = init?.method ?? 'GET';
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => (headers[k] = v));
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : undefined;
    this.calls.push({ method, path: url.pathname + url.search, body, headers });
    const route = `${method} ${url.pathname}`;
    const queue = this.replies.get(route)?.length ? this.replies.get(route) : this.replies.get('*');
    const reply = queue?.shift();
    if (!reply) throw new Error(`fake service: no reply scripted for ${route}`);
    if (reply instanceof Error) throw reply;
    return new Response(reply.body === undefined ? null : JSON.stringify(reply.body), { status: reply.status, headers: { 'content-type': 'application/json', ...reply.headers } });
  };
}

export function tokenAnswer(n: number, expiresIn = 600): Reply {
  return { status: 200, body: { access_token: `pass-${n}`, token_type: 'DPoP', expires_in: expiresIn, refresh_token: `refresh-${n}`, scope: ['list'], grant_expires_at: null, grant_uses_left: null } };
}
