import type { VerifierConfig } from '../config.ts';
import { ServiceUnavailableError, toError } from '../service-client.ts';
import { RevocationRejectedError, type RevocationList } from './revocation-list.ts';
import { type SseEvent, SseParser } from './sse.ts';

export const REVOCATION_EVENTS_PATH = '/api/v1/revocation/events';

/**
 * A snapshot event carries the whole list (signed JWT of up to 8 MiB plus its entries in the clear):
 * longer lines are refused rather than buffered without end.
 */
const MAX_LINE_LENGTH = 20 * 1024 * 1024;
/** Mandate sends a comment every 15 s: three missed mean the connection is dead even if no socket said so. */
const SILENCE_MS = 45_000;
/** Events waiting for their signature check; more than this and we drop the stream and resume. */
const MAX_QUEUED = 10_000;
/** First reconnect delay after a broken stream; doubles per failure up to the cap (see backoffMs). */
const RETRY_BASE_MS = 250;
/** A Retry-After longer than this is read as this: polling runs meanwhile, and the stream is worth a try within the hour. */
const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * The wait a 503 or 429 asks for (`Retry-After`: seconds, or an HTTP date), in ms; undefined when
 * absent or unreadable (the backoff alone then decides).
 */
export function retryAfterMs(value: string | null, nowMs: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const v = value.trim();
  const ms = /^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v) - nowMs;
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}

type Failure = 'not_offered' | 'broken';

/**
 * Follows `GET /api/v1/revocation/events` (decisions §30) and keeps the RevocationList in step: the
 * snapshot event is verified like a polled snapshot, each delta is verified and applied in order, a gap
 * or a delta that does not verify fetches a snapshot with `resync`, and each keep-alive of a stream in
 * step tells the list it is current. `inStep` is what LocalStrategy reads to pause polling.
 *
 * When the stream fails it is opened again with `Last-Event-ID` (the held `rev_seq`) after a backoff
 * with jitter: short for a broken connection (capped at rev_ttl, so we retry at least as often as we
 * poll, and at most 30 s), long (10 x rev_ttl, doubling, up to an hour) when the service does not
 * offer the stream at all; never sooner than the `Retry-After` of a 503 or 429 (a node holding its
 * maximum of streams refuses new ones that way). Polling runs meanwhile.
 */
export class RevocationStream {
  /** True while a stream is open and the held list follows it: its keep-alives count, polling pauses. */
  inStep = false;
  /** Streams opened (for status and tests). */
  connects = 0;
  private controller: AbortController | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private silenceTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;
  /** Bumped per connection: events queued by a stream since replaced are dropped. */
  private generation = 0;
  private queue: Promise<void> = Promise.resolve();
  private queued = 0;

  constructor(
    private readonly config: VerifierConfig,
    private readonly list: RevocationList,
    /** Fetches a snapshot (GET /api/v1/revocation); throws when none could be had. */
    private readonly resync: () => Promise<void>,
  ) {}

  /** Opens the stream (once); it is followed until close(). Never throws, never rejects. */
  start(): void {
    if (this.closed || this.generation > 0) return;
    this.open();
  }

  close(): void {
    this.closed = true;
    this.inStep = false;
    this.generation++;
    this.controller?.abort();
    this.controller = undefined;
    clearTimeout(this.retryTimer);
    clearTimeout(this.silenceTimer);
  }

  private open(): void {
    const generation = ++this.generation;
    this.follow(generation).catch((e: unknown) => this.failed(generation, 'broken', toError(e)));
  }

  private async follow(generation: number): Promise<void> {
    const controller = new AbortController();
    this.controller = controller;
    const seq = this.list.revSeq;
    const headers: Record<string, string> = { accept: 'text/event-stream', 'cache-control': 'no-store' };
    if (seq !== undefined) headers['last-event-id'] = String(seq);
    // The timeout covers the answer's head only: the body is meant to stay open.
    const headTimer = setTimeout(() => controller.abort(new Error(`no answer within ${this.config.timeoutMs} ms`)), this.config.timeoutMs);
    headTimer.unref();
    let res: Response;
    try {
      this.connects++;
      res = await this.config.fetch(`${this.config.serviceUrl}${REVOCATION_EVENTS_PATH}`, {
        method: 'GET',
        headers,
        signal: controller.signal,
        redirect: 'error',
      });
    } catch (e) {
      return this.failed(generation, 'broken', new ServiceUnavailableError(`${REVOCATION_EVENTS_PATH}: Mandate unreachable (${toError(e).message})`));
    } finally {
      clearTimeout(headTimer);
    }
    const type = res.headers.get('content-type') ?? '';
    if (res.status !== 200 || !/^text\/event-stream\b/i.test(type) || res.body === null) {
      await res.body?.cancel().catch(() => undefined);
      const notOffered = res.status === 404 || res.status === 405 || res.status === 501;
      const why = res.status === 200 ? `answered 200 with content-type ${JSON.stringify(type)}` : `answered ${res.status}`;
      // A busy service (503: the node holds its maximum of streams; 429) says when to come back.
      const waitMs = res.status === 503 || res.status === 429 ? retryAfterMs(res.headers.get('retry-after'), Date.now()) : undefined;
      const retry = waitMs === undefined ? '' : ` (the stream again in ${Math.ceil(waitMs / 1000)} s or later)`;
      return this.failed(generation, notOffered ? 'not_offered' : 'broken', new ServiceUnavailableError(`${REVOCATION_EVENTS_PATH} ${why}: polling instead${retry}`), waitMs);
    }
    if (generation !== this.generation) {
      await res.body.cancel().catch(() => undefined);
      return;
    }
    // Resuming from the held list: the deltas since it (or a fresh snapshot) come next.
    this.inStep = seq !== undefined;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    const parser = new SseParser(
      {
        event: (e) => this.enqueue(generation, controller, () => this.handle(e, controller)),
        comment: () =>
          this.enqueue(generation, controller, async () => {
            if (this.inStep) this.list.markLive();
          }),
      },
      MAX_LINE_LENGTH,
    );
    this.watchSilence(controller);
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        this.failures = 0; // the service is there and talking
        this.watchSilence(controller);
        parser.push(value);
      }
    } catch (e) {
      if (generation !== this.generation) return; // closed or replaced: not a failure
      await reader.cancel().catch(() => undefined);
      controller.abort();
      return this.failed(generation, 'broken', new ServiceUnavailableError(`${REVOCATION_EVENTS_PATH}: the stream broke (${toError(e).message})`));
    }
    this.failed(generation, 'broken', new ServiceUnavailableError(`${REVOCATION_EVENTS_PATH}: the stream ended; resuming`));
  }

  /** Events are handled one after the other, in stream order: each waits for the signature check of the one before. */
  private enqueue(generation: number, controller: AbortController, task: () => Promise<void>): void {
    if (++this.queued > MAX_QUEUED) {
      controller.abort(new Error('too many events waiting'));
      return;
    }
    this.queue = this.queue
      .then(() => (generation === this.generation ? task() : undefined))
      .catch((e: unknown) => this.config.onError(toError(e)))
      .finally(() => this.queued--);
  }

  private async handle(e: SseEvent, controller: AbortController): Promise<void> {
    try {
      if (e.event === 'snapshot') {
        let body: unknown;
        try {
          body = JSON.parse(e.data);
        } catch {
          throw new RevocationRejectedError('invalid_request', 'the data is not JSON', 'revocation stream: snapshot');
        }
        await this.list.accept(body, undefined, 'revocation stream: snapshot');
        this.inStep = true;
      } else if (e.event === 'delta') {
        const outcome = await this.list.applyDelta(e.data);
        if (outcome === 'gap') await this.catchUp('a delta does not follow the held list (a change was missed)', controller);
        else this.inStep = true;
      }
      // Other event types: not ours to know; ignored.
    } catch (err) {
      if (!(err instanceof RevocationRejectedError)) throw err;
      this.config.onError(err);
      await this.catchUp('an event did not verify', controller);
    }
  }

  /**
   * The held list may be behind the stream: its keep-alives stop counting and polling resumes until a
   * snapshot is fetched; if none can be, the stream is dropped and resumed later.
   */
  private async catchUp(why: string, controller: AbortController): Promise<void> {
    this.inStep = false;
    try {
      await this.resync();
      this.inStep = true;
    } catch (e) {
      this.config.onError(new ServiceUnavailableError(`revocation stream: ${why}, and no snapshot could be fetched (${toError(e).message})`));
      controller.abort();
    }
  }

  private watchSilence(controller: AbortController): void {
    clearTimeout(this.silenceTimer);
    this.silenceTimer = setTimeout(() => controller.abort(new Error(`nothing received for ${SILENCE_MS / 1000} s`)), SILENCE_MS);
    this.silenceTimer.unref();
  }

  /** `atLeastMs`: the service's Retry-After, which the backoff never undercuts. */
  private failed(generation: number, kind: Failure, error: Error, atLeastMs = 0): void {
    if (this.closed || generation !== this.generation) return;
    this.inStep = false;
    clearTimeout(this.silenceTimer);
    this.config.onError(error);
    const delay = Math.max(atLeastMs, this.backoffMs(kind, this.failures++));
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.open(), delay);
    this.retryTimer.unref(); // following the stream never keeps the process alive
  }

  /** Exponential backoff with jitter (half fixed, half random), so many sites do not reconnect in step. */
  private backoffMs(kind: Failure, failures: number): number {
    const ttlMs = this.config.revTtlSec * 1000;
    const [base, cap] = kind === 'not_offered' ? [10 * ttlMs, 3_600_000] : [RETRY_BASE_MS, Math.min(30_000, Math.max(1_000, ttlMs))];
    const d = Math.min(cap, base * 2 ** Math.min(failures, 30));
    return d / 2 + Math.random() * (d / 2);
  }
}
