import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * What the scrape reads at collection time (cheap reads only: no snapshot rebuild per scrape).
 * Each answers undefined when it has nothing to say (e.g. no revocation snapshot built yet).
 */
export interface MetricsSources {
  /** Outbox messages not yet sent nor failed (due now or waiting for a retry). */
  outboxBacklog(): Promise<number>;
  /** The shared rev_seq counter. */
  revSeq(): Promise<number>;
  /** Entries of the revocation snapshot this node built last; undefined before the first build. */
  revocationEntries(): number | undefined;
  /** Revocation event streams open on this node. */
  revocationStreams(): number;
  /** The PostgreSQL pool's connections; undefined on SQLite. */
  pool(): { total: number; idle: number; waiting: number } | undefined;
}

/**
 * The service's Prometheus metrics (docs/operations/metrics.md), on a registry of their own per app
 * (tests build many apps in one process; the global registry would mix them). Only the HTTP layer
 * and app wiring call it: domain code stays free of it.
 */
export class Metrics {
  readonly registry = new Registry();
  private sources: MetricsSources | undefined;

  private readonly httpRequests = new Counter({ name: 'mandate_http_requests_total', help: 'HTTP requests answered, by route pattern (unmatched: no route), method and status', labelNames: ['route', 'method', 'status'] as const, registers: [this.registry] });
  private readonly httpDuration = new Histogram({ name: 'mandate_http_request_duration_seconds', help: 'HTTP response time, by route pattern and method', labelNames: ['route', 'method'] as const, buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registers: [this.registry] });
  private readonly verifications = new Counter({ name: 'mandate_verify_total', help: 'Verify answers, by mode (cloud: /api/v1/verify, stepup: /api/v1/stepup/verify) and outcome (ok or the error code)', labelNames: ['mode', 'outcome'] as const, registers: [this.registry] });
  private readonly passesIssued = new Counter({ name: 'mandate_passes_issued_total', help: 'Passes issued or renewed (POST /api/v1/token)', registers: [this.registry] });
  private readonly stepupsConsumed = new Counter({ name: 'mandate_stepups_consumed_total', help: 'Step-up tokens used up by a successful verification (cloud or local mode)', registers: [this.registry] });
  private readonly dbErrors = new Counter({ name: 'mandate_db_errors_total', help: 'Requests answered 503 because the database was unreachable', registers: [this.registry] });
  private readonly workerRestarts = new Counter({ name: 'mandate_worker_restarts_total', help: 'Worker threads started again after one stopped', labelNames: ['worker'] as const, registers: [this.registry] });
  private readonly notePushesDropped = new Counter({ name: 'mandate_note_pushes_dropped_total', help: "Agents' note pushes dropped unsent: over their owner's budget of undelivered notes (the notes stay in the inbox)", registers: [this.registry] });
  private readonly deltasSent = new Counter({ name: 'mandate_revocation_deltas_sent_total', help: 'Revocation deltas written to event streams (GET /api/v1/revocation/events), one per stream', registers: [this.registry] });
  private readonly streamsRefused = new Counter({ name: 'mandate_revocation_streams_refused_total', help: 'Revocation event streams refused (503) because this node held REVOCATION_MAX_STREAMS', registers: [this.registry] });
  // A counter of its own rather than a label on the one above: that one still means "the node is
  // full, add capacity", and a client over its share (its own doing) must not move it.
  private readonly streamsOverShare = new Counter({ name: 'mandate_revocation_streams_share_refused_total', help: 'Revocation event streams refused (429) because the client address (IPv4, IPv6 /64) or its IPv6 /48 (network) held its share of this node\'s streams', labelNames: ['share'] as const, registers: [this.registry] });
  private readonly deliveryFailures = new Counter({ name: 'mandate_outbox_delivery_failures_total', help: 'Outbox messages given up for good, by channel', labelNames: ['channel'] as const, registers: [this.registry] });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'mandate_' });
    const self = this;
    // A read that fails (database unreachable) keeps the gauge's last value: the scrape itself must
    // still answer, since it is what shows the outage (mandate_db_errors_total).
    const read = async (gauge: Gauge, value: (s: MetricsSources) => Promise<number>) => {
      if (!self.sources) return;
      try {
        gauge.set(await value(self.sources));
      } catch { /* kept */ }
    };
    new Gauge({ name: 'mandate_outbox_backlog', help: 'Outbox messages not yet sent nor failed (read at scrape)', registers: [this.registry], collect() {
      return read(this, (s) => s.outboxBacklog());
    } });
    new Gauge({ name: 'mandate_rev_seq', help: 'The shared revocation counter rev_seq (read at scrape)', registers: [this.registry], collect() {
      return read(this, (s) => s.revSeq());
    } });
    new Gauge({ name: 'mandate_db_pool_connections', help: 'PostgreSQL pool: connections open (total), idle, and requests waiting for one (waiting)', labelNames: ['state'] as const, registers: [this.registry], collect() {
      const p = self.sources?.pool();
      if (p) for (const state of ['total', 'idle', 'waiting'] as const) this.set({ state }, p[state]);
    } });
    new Gauge({ name: 'mandate_revocation_streams', help: 'Revocation event streams (GET /api/v1/revocation/events) open on this node', registers: [this.registry], collect() {
      const n = self.sources?.revocationStreams();
      if (n !== undefined) this.set(n);
    } });
    new Gauge({ name: 'mandate_revocation_entries', help: 'Entries (agents and grants) of the revocation snapshot this node built last', registers: [this.registry], collect() {
      const n = self.sources?.revocationEntries();
      if (n !== undefined) this.set(n);
    } });
  }

  revocationDeltasSent(streams: number): void {
    this.deltasSent.inc(streams);
  }

  revocationStreamRefused(reason: 'node' | 'address' | 'network'): void {
    if (reason === 'node') this.streamsRefused.inc();
    else this.streamsOverShare.inc({ share: reason });
  }

  /** The app's store and snapshots exist after the metrics; attached once built. */
  attachSources(sources: MetricsSources): void {
    this.sources = sources;
  }

  httpRequest(route: string, method: string, status: number, seconds: number): void {
    this.httpRequests.inc({ route, method, status: String(status) });
    this.httpDuration.observe({ route, method }, seconds);
  }

  verified(mode: 'cloud' | 'stepup', outcome: string): void {
    this.verifications.inc({ mode, outcome });
  }

  passIssued(): void {
    this.passesIssued.inc();
  }

  stepupConsumed(): void {
    this.stepupsConsumed.inc();
  }

  databaseDown(): void {
    this.dbErrors.inc();
  }

  workerRestarted(worker: string): void {
    this.workerRestarts.inc({ worker });
  }

  notePushesDroppedBy(count: number): void {
    this.notePushesDropped.inc(count);
  }

  deliveryFailed(channel: string): void {
    this.deliveryFailures.inc({ channel });
  }

  /** The text exposition format, and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
