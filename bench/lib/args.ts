import type { Backend } from './stores.ts';

export interface Options {
  stores: Backend[];
  /** Stored agents (and grants) of the scale runs; empty: no scale run. */
  sizes: number[];
  concurrency: number;
  /**
   * Cloud verify is also measured with this many requests in flight (0: not): enough that both
   * servers are bound by CPU, not by the latency of one request (bench/README.md, "Concurrency").
   */
  saturation: number;
  requests: number;
  rounds: number;
  /** Verifications each fresh server process gets, unmeasured, before cloud verify's first round (0: none). */
  processWarmup: number;
  suites: Set<Suite>;
  out: string | undefined;
  /** --isolate: serving process on CPU 0, load generator and database backends on the others (lib/isolation.ts). */
  isolate: boolean;
}

export const SUITES = ['cloud', 'local', 'token', 'scale', 'push', 'oidc'] as const;
export type Suite = (typeof SUITES)[number];

export const USAGE = `npm run bench -- [options]
  --store sqlite|postgres|both   stores to measure (default both)
  --sizes 1k,100k,1M             scale runs: stored agents+grants (and activity records); none = skip (default 1k,100k)
  --suites cloud,local,token,scale,push,oidc  what to run (default all; push: web push fan-out, no store;
                                 oidc: /oidc/token refresh beside oidc-provider 8)
  --concurrency N                concurrent requests of the load generator (default 32)
  --saturation N                 cloud verify (and the scale runs' verify) also at N in flight, where both
                                 servers are bound by CPU; 0 = not (default 128)
  --requests N                   measured verify requests per scenario, over all rounds (default 12000)
  --rounds N                     baseline and measured scenario take turns N times (default 4)
  --process-warmup N             cloud verify: verifications each fresh server process gets, unmeasured,
                                 before its first round, so that rounds compare steady states (default
                                 20000; 0 = none: the first rounds then include V8 compiling the path)
  --out FILE                     also write the tables (Markdown) to FILE
  --isolate                      serving process on CPU 0; load generator and PostgreSQL backends on the
                                 other CPUs (emulates a service with its own machine; needs taskset)
  --quick                        small numbers for a smoke run: --sizes 1k --requests 2000 --rounds 2 --process-warmup 2000`;

function size(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(text.trim());
  if (!m) throw new Error(`not a size: ${text} (e.g. 1k, 100k, 1M)`);
  const n = Number(m[1]) * ({ k: 1e3, K: 1e3, m: 1e6, M: 1e6 }[m[2] ?? ''] ?? 1);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`not a size: ${text}`);
  return n;
}

function positive(name: string, text: string | undefined): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
}

export function parseArgs(argv: readonly string[]): Options {
  const o: Options = { stores: ['sqlite', 'postgres'], sizes: [1e3, 1e5], concurrency: 32, saturation: 128, requests: 12_000, rounds: 4, processWarmup: 20_000, suites: new Set(SUITES), out: undefined, isolate: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--store': {
        const v = value();
        if (v === 'both') o.stores = ['sqlite', 'postgres'];
        else if (v === 'sqlite' || v === 'postgres') o.stores = [v];
        else throw new Error('--store is sqlite, postgres or both');
        break;
      }
      case '--sizes': {
        const v = value();
        o.sizes = v === 'none' ? [] : v.split(',').map(size).sort((a, b) => a - b);
        break;
      }
      case '--suites': {
        const names = value().split(',');
        for (const n of names) if (!(SUITES as readonly string[]).includes(n)) throw new Error(`unknown suite ${n} (${SUITES.join(', ')})`);
        o.suites = new Set(names as Suite[]);
        break;
      }
      case '--concurrency': o.concurrency = positive(flag, value()); break;
      case '--saturation': {
        const v = value();
        o.saturation = v === '0' ? 0 : positive(flag, v);
        break;
      }
      case '--requests': o.requests = positive(flag, value()); break;
      case '--rounds': o.rounds = positive(flag, value()); break;
      case '--process-warmup': {
        const v = value();
        o.processWarmup = v === '0' ? 0 : positive(flag, v);
        break;
      }
      case '--out': o.out = value(); break;
      case '--isolate': o.isolate = true; break;
      case '--quick': o.sizes = [1e3]; o.requests = 2000; o.rounds = 2; o.processWarmup = 2000; break;
      case '--help': case '-h': throw new Error(USAGE);
      default: throw new Error(`unknown option ${flag}\n${USAGE}`);
    }
  }
  return o;
}

export const sizeLabel = (n: number): string => (n >= 1e6 && n % 1e6 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 1e3 === 0 ? `${n / 1e3}k` : String(n));
