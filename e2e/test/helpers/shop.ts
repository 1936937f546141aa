import { type Child, runNode } from '../../../packages/server/test/helpers/child-process.ts';
import { freePort } from '../../../packages/server/test/helpers/server-process.ts';

/** The demo shop (`examples/demo-shop`) as its own process, configured as its README says. */

export type ShopMode = 'cloud' | 'local';

export type ShopOptions = {
  mode: ShopMode;
  /** Where the shop reaches Mandate (MANDATE_URL): the server's `url`, or a relay in front of it. */
  mandateUrl: string;
  /** Mandate's BASE_URL (MANDATE_ISSUER): passes carry it as `iss`; local mode compares it. */
  issuer: string;
  /** SITE_ID: the site agents ask access for. */
  site: string;
  /** Local mode: REV_TTL_SEC and MAX_STALE_SEC. */
  revTtlSec?: number;
  maxStaleSec?: number;
};

/** `GET /healthz` of the shop: the verifier's status. */
export type ShopHealth = { status: number; ready: boolean; keys?: number; revSeq?: number; revocationAgeSec?: number };

export type Shop = {
  readonly mode: ShopMode;
  readonly site: string;
  /** Where the shop listens and how agents reach it (its PUBLIC_BASE_URL). */
  readonly url: string;
  readonly process: Child;
  health(): Promise<ShopHealth>;
  stop(): Promise<number | null>;
};

export async function startShop(o: ShopOptions): Promise<Shop> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // The command behind `npm run demo:shop`, without npm in between, so that stop() signals the shop itself.
  const child = runNode(`${o.mode} shop`, ['--import', 'tsx', 'examples/demo-shop/shop.ts'], { env: {
    MANDATE_URL: o.mandateUrl,
    MANDATE_MODE: o.mode,
    MANDATE_ISSUER: o.issuer,
    SITE_ID: o.site,
    PUBLIC_BASE_URL: url,
    PORT: String(port),
    HOST: '127.0.0.1',
    ...(o.revTtlSec !== undefined ? { REV_TTL_SEC: String(o.revTtlSec) } : {}),
    ...(o.maxStaleSec !== undefined ? { MAX_STALE_SEC: String(o.maxStaleSec) } : {}),
  } });
  await child.waitFor('demo shop listening on', 60_000);
  return {
    mode: o.mode,
    site: o.site,
    url,
    process: child,
    async health() {
      const res = await fetch(`${url}/healthz`);
      return { status: res.status, ...((await res.json()) as Omit<ShopHealth, 'status'>) };
    },
    stop: () => child.stop(),
  };
}
