/** One sample's value from a Prometheus `/metrics` page (a metric without labels); undefined when it is not there. */
export async function metricValue(metricsUrl: string, name: string): Promise<number | undefined> {
  const line = (await (await fetch(metricsUrl)).text()).split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}
