import { HttpOwner } from '../../../packages/server/test/helpers/over-http.ts';
import { startServer, type ServerProcess } from '../../../packages/server/test/helpers/server-process.ts';
import { verifyEmail } from '../../../packages/server/test/helpers/email-over-http.ts';
import { AgentCli, show } from './cli.ts';
import { type Shop, type ShopOptions, startShop } from './shop.ts';

/**
 * One deployment of real processes: the Mandate service, the demo shop in cloud mode and in local
 * mode (both serving the same site id, as two servers of one shop would), an owner with a passkey
 * played by the test over HTTP, and agents run as the CLI, each in its own directory.
 */

/** The site id both shops serve; agents call them with `--site`, since their URLs differ. */
export const SITE = 'demo-shop.example';
export const ALL_SCOPES = 'list,orders:read,checkout';

export type DeploymentOptions = {
  /** Local-mode shop: REV_TTL_SEC and MAX_STALE_SEC. */
  local: { revTtlSec: number; maxStaleSec: number };
  /** Start the service with ADMIN_EMAILS naming this account, sign it up and verify its email. */
  withAdmin?: boolean;
};

export class Deployment {
  readonly agents: AgentCli[] = [];
  readonly extraShops: Shop[] = [];
  private constructor(
    readonly server: ServerProcess,
    readonly owner: HttpOwner,
    readonly admin: HttpOwner | undefined,
    readonly cloud: Shop,
    readonly local: Shop,
  ) {}

  static async start(o: DeploymentOptions): Promise<Deployment> {
    const adminEmail = `admin-${process.pid}@example.com`;
    const server = await startServer({ name: 'mandate', ...(o.withAdmin ? { env: { ADMIN_EMAILS: adminEmail } } : {}) });
    const shops: Shop[] = [];
    try {
      const owner = await HttpOwner.signUp(server, server.baseUrl);
      const admin = o.withAdmin ? await HttpOwner.signUp(server, server.baseUrl, { email: adminEmail }) : undefined;
      // ADMIN_EMAILS gives the role only to an address its holder has proven (decisions §25).
      if (admin) await verifyEmail(server, admin.auth, admin.email);
      shops.push(await startShop({ mode: 'cloud', mandateUrl: server.url, issuer: server.baseUrl, site: SITE }));
      shops.push(await startShop({ mode: 'local', mandateUrl: server.url, issuer: server.baseUrl, site: SITE, ...o.local }));
      const [cloud, local] = shops as [Shop, Shop];
      return new Deployment(server, owner, admin, cloud, local);
    } catch (e) {
      for (const s of shops) await s.stop();
      await server.stop();
      throw e;
    }
  }

  /** Another shop process against this service (e.g. behind a relay); stopped with the deployment. */
  async startShop(o: Omit<ShopOptions, 'issuer' | 'site'>): Promise<Shop> {
    const shop = await startShop({ ...o, issuer: this.server.baseUrl, site: SITE });
    this.extraShops.push(shop);
    return shop;
  }

  /** A new agent: key made and registered by the CLI (`init --email`, the owner's password). */
  async newAgent(name: string): Promise<AgentCli> {
    const agent = await AgentCli.init(this.server.url, this.owner, name);
    this.agents.push(agent);
    return agent;
  }

  /** The CLI asks for access and waits (`request --wait`) while the owner approves on the "phone". */
  async grantAccess(agent: AgentCli, scopes = ALL_SCOPES): Promise<void> {
    const asking = agent.run('request', '--site', SITE, '--scopes', scopes, '--wait', '--interval', '0.2', '--timeout', '60');
    await this.owner.answerNext(agent.agentId, 'initial');
    const r = await asking;
    if (r.code !== 0 || r.json?.['status'] !== 'approved') throw new Error(`access not granted: ${show(r)}`);
  }

  /** The agent's current pass for the site, as the CLI keeps it (`token --show`). */
  async pass(agent: AgentCli, opts: { refresh?: boolean } = {}): Promise<string> {
    const r = await agent.run('token', '--site', SITE, '--show', ...(opts.refresh ? ['--refresh'] : []));
    const pass = r.json?.['access_token'];
    if (r.code !== 0 || typeof pass !== 'string') throw new Error(`no pass: ${show(r)}`);
    return pass;
  }

  /** The owner's grant for this agent at the site. */
  async grantOf(agent: AgentCli): Promise<string> {
    const grant = (await this.owner.grants()).find((g) => g.agent_id === agent.agentId && g.site === SITE);
    if (!grant) throw new Error(`no live grant of ${agent.agentId} for ${SITE}`);
    return grant.id;
  }

  /** Everything the processes printed, for failure messages. */
  logs(): string {
    return [
      `--- mandate\n${this.server.logs()}`,
      ...[this.cloud, this.local, ...this.extraShops].map((s) => `--- ${s.process.name} (${s.url})\n${s.process.output()}`),
    ].join('\n');
  }

  async stop(): Promise<void> {
    for (const s of [this.cloud, this.local, ...this.extraShops]) await s.stop();
    await this.server.stop();
    for (const a of this.agents) a.remove();
  }
}
