import { ConfigError, loadEnv, parseConfig, unsafeDefaults } from './config/config.ts';
import { buildApp } from './app.ts';
import { startMetricsServer } from './metrics/metrics-server.ts';

/** Read config, build app, listen. Nothing else. */
async function main(): Promise<void> {
  let config;
  try {
    config = parseConfig(loadEnv());
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`mandate: ${e.message}\nSee README.md (Configuration) and .env.example.\n`);
      process.exit(2);
    }
    throw e;
  }
  const warnings = unsafeDefaults(config);
  if (warnings.length) {
    const bar = '!'.repeat(78);
    process.stderr.write(`${bar}\n!! DEVELOPMENT DEFAULTS IN USE — not safe for production:\n${warnings.map((w) => `!!  - ${w}`).join('\n')}\n${bar}\n`);
  }
  const { app, services } = await buildApp({ config });
  // Prometheus metrics on a port of their own, never the public one; off unless METRICS_PORT is set.
  const metricsServer = config.metrics ? await startMetricsServer(services.metrics, config.metrics.host, config.metrics.port) : null;
  const stop = async (signal: NodeJS.Signals) => {
    process.stdout.write(`Mandate is stopping (${signal}): finishing the requests in flight, then exiting.\n`);
    metricsServer?.close();
    await app.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await app.listen({ port: config.port, host: config.host });
  const where = config.databaseUrl ? 'PostgreSQL' : `embedded database in ${config.dataDir}`;
  const metricsLine = config.metrics ? `Prometheus metrics: http://${hostForUrl(config.metrics.host)}:${config.metrics.port}/metrics (keep this port private).\n` : '';
  process.stdout.write(`\nMandate is running on ${where}.\nOpen ${config.baseUrl}/app to sign up.\n${metricsLine}Health check: ${config.baseUrl}/healthz (also /api/healthz).\n\n`);
}

/** An IPv6 address goes in brackets inside a URL. */
function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

main().catch((e: unknown) => {
  process.stderr.write(`mandate: failed to start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
