import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { WaitOptions, WaitProgress } from '../approvals/wait.ts';
import { toolError } from './results.ts';

/** How long a finished result waits for its `mandate_wait` before it is dropped. */
const KEEP_FINISHED_MS = 15 * 60_000;

/**
 * Work that waits for the owner and then finishes what the tool call began (collects the step-up
 * token and retries the site call, fetches the first pass...). It runs in this process whether or
 * not a tool call is waiting for it, so a `pending` answer loses nothing: `mandate_wait` picks it up.
 * The step-up token and the pass never leave it; only the finished tool result does.
 */
export class PendingWork {
  /** The request the owner is asked about now (a work may go on to a second one, e.g. access then a step-up). */
  txnId: string;
  /** Never rejects: a failure becomes a tool error. */
  readonly result: Promise<CallToolResult>;
  private readonly listeners = new Set<(p: WaitProgress) => void>();
  /** The result is there (or will be at once). */
  done = false;

  constructor(
    private readonly registry: PendingRegistry,
    txnId: string,
    /** What the owner is asked, for the model's text and the progress messages. */
    readonly what: string,
    run: (work: PendingWork) => Promise<CallToolResult>,
    /** The site, when the work began with an access request (a second request for it would be refused while this one waits). */
    readonly accessSite?: string,
  ) {
    this.txnId = txnId;
    registry.register(this, txnId);
    this.result = Promise.resolve()
      .then(() => run(this))
      .catch((e: unknown) => toolError(e))
      .finally(() => {
        this.done = true;
        registry.finished(this);
      });
  }

  /** How the SDK waits for the owner within this work: progress to the listeners, stopped when the server stops. */
  waitOptions(expiresAt?: number): WaitOptions {
    return { ...(expiresAt ? { expiresAt } : {}), intervalMs: this.registry.pollIntervalMs, signal: this.registry.shutdown, onProgress: (p) => this.report(p) };
  }

  private report(p: WaitProgress): void {
    for (const l of this.listeners) l(p);
  }

  /** The work now waits on another request: `mandate_wait` finds it under that id too. */
  waitsOn(txnId: string): void {
    this.txnId = txnId;
    this.registry.register(this, txnId);
  }

  subscribe(listener: (p: WaitProgress) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** The unfinished (or finished but not yet collected) work of this process, by request id. */
export class PendingRegistry {
  private readonly works = new Map<string, PendingWork>();

  constructor(
    /** Between polls of the service while the owner decides. */
    readonly pollIntervalMs: number,
    /** Aborted when the server stops: works stop waiting, so the process can end. */
    readonly shutdown: AbortSignal,
  ) {}

  get(txnId: string): PendingWork | undefined {
    return this.works.get(txnId);
  }

  /** The request this process filed for access to `site` that still waits (for `mandate_wait`), if any. */
  accessWaiting(site: string): string | undefined {
    for (const w of this.works.values()) if (w.accessSite === site && !w.done) return w.txnId;
    return undefined;
  }

  /** Called when a tool call hands the work's result to the model: nothing is left to collect. */
  delivered(work: PendingWork): void {
    for (const [id, w] of this.works) if (w === work) this.works.delete(id);
  }

  /** @internal */
  register(work: PendingWork, txnId: string): void {
    this.works.set(txnId, work);
  }

  /** @internal Finished: kept a while for `mandate_wait`, then dropped so the process does not grow. */
  finished(work: PendingWork): void {
    setTimeout(() => this.delivered(work), KEEP_FINISHED_MS).unref();
  }
}
