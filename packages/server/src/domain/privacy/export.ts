/**
 * The data export (decisions §16): everything held about the caller, as one JSON document written
 * in pieces. It is a list of named sections (export-sections.ts), each one small function, so a
 * feature that keeps something about a person adds its section (`DataExport.add`) without touching
 * the writer. A `list` section yields its items one by one, reading the store page by page, so an
 * account with a long activity trail never becomes one giant string in memory.
 *
 * What no section may write: a hash, a secret, a token, a push subscription's keys, or anything of
 * another person. Sections choose fields one by one (never a whole record), which is what keeps a
 * field added to a record later out of the export until someone decides it belongs there.
 */
import type { Store, UserRecord } from '../../store/ports/index.ts';
import type { Clock } from '../../clock.ts';
import type { RateLimiter } from '../rate-limit.ts';

/** One export per account per minute (429 with retry_after beyond). */
export const EXPORT_LIMIT = { perAccount: 1, windowSec: 60 } as const;
export const EXPORT_FORMAT = 'mandate-export';
export const EXPORT_VERSION = 1;

export interface ExportContext {
  user: UserRecord;
  store: Store;
  now: number;
  /** 'admin' or 'user', as GET /api/me says. */
  role: string;
}

/** A section whose value is one JSON value (an object, say). */
export interface ValueSection {
  name: string;
  kind: 'value';
  read(ctx: ExportContext): Promise<unknown>;
}

/** A section whose value is an array, written item by item. */
export interface ListSection {
  name: string;
  kind: 'list';
  read(ctx: ExportContext): AsyncIterable<unknown>;
}

export type ExportSection = ValueSection | ListSection;

/** Chunks of about this many characters are handed to the response. */
const CHUNK = 16 * 1024;

/** The document, as strings whose concatenation is one JSON object with a key per section. */
export async function* exportDocument(sections: readonly ExportSection[], ctx: ExportContext, head: Record<string, unknown>): AsyncGenerator<string> {
  let buffer = JSON.stringify(head).slice(0, -1);
  for (const section of sections) {
    buffer += `,${JSON.stringify(section.name)}:`;
    if (section.kind === 'value') {
      buffer += JSON.stringify((await section.read(ctx)) ?? null);
    } else {
      buffer += '[';
      let first = true;
      for await (const item of section.read(ctx)) {
        buffer += `${first ? '' : ','}${JSON.stringify(item)}`;
        first = false;
        if (buffer.length >= CHUNK) {
          yield buffer;
          buffer = '';
        }
      }
      buffer += ']';
    }
  }
  yield `${buffer}}`;
}

/**
 * Reads a list `size` rows at a time: `page(cursor)` answers the rows after `cursor` (undefined for
 * the first page), `cursorOf` the cursor of a row. Stops at a short page.
 */
export async function* paged<T, C>(page: (cursor: C | undefined) => Promise<T[]>, cursorOf: (row: T) => C, size: number): AsyncGenerator<T> {
  let cursor: C | undefined;
  for (;;) {
    const rows = await page(cursor);
    yield* rows;
    const last = rows.at(-1);
    if (rows.length < size || last === undefined) return;
    cursor = cursorOf(last);
  }
}

/** "2026-11-28T19:00:00.000Z", or null. */
export const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export class DataExport {
  private readonly sections: ExportSection[];

  constructor(
    private readonly d: { store: Store; clock: Clock; limiter: RateLimiter; baseUrl: string; role: (user: UserRecord) => string },
    sections: readonly ExportSection[],
  ) {
    this.sections = [...sections];
  }

  /** Adds a section (another feature's data); names are unique. */
  add(section: ExportSection): void {
    if (this.sections.some((s) => s.name === section.name)) throw new Error(`export section ${section.name} exists already`);
    this.sections.push(section);
  }

  /** The section names, in order. */
  names(): string[] {
    return this.sections.map((s) => s.name);
  }

  /**
   * GET /api/export: counts the export against EXPORT_LIMIT (429 before anything is written), then
   * answers the file name and the document's chunks, read as they are sent.
   */
  async start(user: UserRecord): Promise<{ filename: string; chunks: AsyncGenerator<string> }> {
    await this.d.limiter.check(`export:${user.id}`, EXPORT_LIMIT.perAccount, EXPORT_LIMIT.windowSec);
    const now = this.d.clock.now();
    const ctx: ExportContext = { user, store: this.d.store, now, role: this.d.role(user) };
    const head = { format: EXPORT_FORMAT, version: EXPORT_VERSION, service: this.d.baseUrl, exported_at: iso(now), sections: this.names() };
    return { filename: `mandate-export-${new Date(now).toISOString().slice(0, 10)}.json`, chunks: exportDocument(this.sections, ctx, head) };
  }
}
