import assert from 'node:assert/strict';
import { WebSocket } from 'ws';

// A take-over relay end for tests (decisions §21): a real `ws` client that keeps every message it
// got and how it was closed.

/** A client socket that keeps every message and the close it got. */
export class RelayClient {
  readonly messages: Record<string, unknown>[] = [];
  closed: { code: number; reason: string } | undefined;
  readonly ws: WebSocket;
  readonly opened: Promise<void>;
  readonly refused: Promise<number>;
  constructor(url: string, headers: Record<string, string>) {
    this.ws = new WebSocket(url, { headers });
    this.opened = new Promise((resolve, reject) => { this.ws.once('open', () => resolve()); this.ws.once('error', reject); });
    this.refused = new Promise((resolve) => this.ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
    this.opened.catch(() => {});
    this.ws.on('message', (d) => this.messages.push(JSON.parse(d.toString()) as Record<string, unknown>));
    this.ws.on('close', (code, reason) => { this.closed = { code, reason: reason.toString() }; });
  }
  send(m: unknown): void {
    this.ws.send(typeof m === 'string' ? m : JSON.stringify(m));
  }
  /** Waits up to 2 s for `check`; `poll` refreshes what it looks at (a store read) before each look. */
  async until(check: () => boolean, what: string, poll?: () => Promise<void>): Promise<void> {
    for (let i = 0; i < 200 && (await poll?.(), !check()); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(check(), `timed out waiting for ${what}: ${JSON.stringify(this.messages.slice(-3))} ${JSON.stringify(this.closed)}`);
  }
}
