import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay in front of the Mandate server that the test can cut: a shop pointed at it loses
 * Mandate while the agent (and the owner) still reach the server directly. While cut, the relay
 * keeps its port but drops every connection at once, as an unreachable service looks to a client
 * (the request fails without an answer).
 */
export class Relay {
  private cut = false;
  private readonly open = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(target: { host: string; port: number }): Promise<Relay> {
    let relay: Relay | undefined;
    const server = createServer((client) => relay?.accept(client, target));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    relay = new Relay(server, `http://127.0.0.1:${port}`);
    return relay;
  }

  private accept(client: Socket, target: { host: string; port: number }): void {
    if (this.cut) return void client.destroy();
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      this.open.add(s);
      s.once('close', () => this.open.delete(s));
      s.on('error', () => undefined); // a reset on one side just ends the pair
    }
    client.pipe(upstream).pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  }

  /** From now on Mandate is unreachable through the relay; connections kept alive are dropped too. */
  cutOff(): void {
    this.cut = true;
    for (const s of this.open) s.destroy();
  }

  restore(): void {
    this.cut = false;
  }

  async close(): Promise<void> {
    this.cutOff();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
