import { before } from 'node:test';
import { freePort } from './server-process.ts';

/** One sample's value from a Prometheus `/metrics` page (a metric without labels); undefined when it is not there. */
export async function metricValue(metricsUrl: string, name: string): Promise<number | undefined> {
  const line = (await (await fetch(metricsUrl)).text()).split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

/**
 * The metrics endpoint of the service a describe block starts: a free port, taken in a `before` hook
 * of that block (call this before the service's helper, whose environment reads `port()` when its
 * own hook runs), and one sample's value from that port's `/metrics`.
 */
export function metricsEndpoint(): { port: () => string; value: (name: string) => Promise<number | undefined> } {
  let port = 0;
  before(async () => {
    port = await freePort();
  });
  return {
    port: () => String(port),
    value: (name) => metricValue(`http://127.0.0.1:${port}/metrics`, name),
  };
}
