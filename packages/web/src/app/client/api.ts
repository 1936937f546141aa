// Talking to the JSON API: same-origin fetch with the session cookie; every failure becomes an
// ApiError whose message says what happened and what to do next.

/** A failed call. `status` 0 = no connection; `detail` is the server's own text. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    message: string,
    readonly status: number,
    readonly detail: string,
    readonly nextStep?: string,
    /** A 429's wait in seconds (`retry_after`, or the Retry-After header), when the service said. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** A mistake the app catches before asking the server (shown like a 400). */
export const userError = (text: string): ApiError => new ApiError(text, 400, text);

/** Server time minus this device's time (ms), from the Date header, so "time left" is honest. */
let clockSkew = 0;
export const serverNow = (): number => Date.now() + clockSkew;

/** The service's terse text as a sentence: capital first letter, a full stop at the end. */
export const sentence = (text: string): string => {
  const t = text.trim();
  if (!t) return t;
  const first = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
};

interface ErrorBody {
  detail?: unknown;
  retry_after?: unknown;
  next_step?: unknown;
}

/** 422 items as `field: message` lines. */
function validationText(items: unknown[]): string {
  return items
    .map((item) => {
      if (!item || typeof item !== 'object') return '';
      const { loc, msg } = item as { loc?: unknown; msg?: unknown };
      const where = Array.isArray(loc) ? (loc.slice(1).join('.') || loc.join('.')) : '';
      return where ? `${where}: ${String(msg)}` : String(msg);
    })
    .filter(Boolean)
    .join('\n');
}

/** The readable sentence for an error answer: the server's detail plus what to do next. */
export function describe(status: number, body: ErrorBody | null, retryAfterHeader: string | null): { message: string; detail: string } {
  const detail = typeof body?.detail === 'string' ? body.detail : '';
  if (status === 429) {
    const wait = Number(body?.retry_after ?? retryAfterHeader);
    return { message: `Too many attempts. Wait ${Number.isFinite(wait) && wait > 0 ? `${Math.ceil(wait)} s` : 'a moment'} and try again.`, detail };
  }
  if (status === 422 && Array.isArray(body?.detail)) {
    return { message: `${validationText(body.detail)}\nCorrect this and try again.`, detail: validationText(body.detail) };
  }
  if (status >= 500) return { message: 'The service is unavailable for a moment. Try again shortly.', detail };
  const next: Record<number, string> = {
    403: typeof body?.next_step === 'string' ? '' : ' Reload the page and try again.',
    404: ' It may have been removed meanwhile; the list has been refreshed.',
    413: ' Make it shorter and try again.',
  };
  if (!detail) return { message: `The request failed (${status}). Reload the page and try again.`, detail };
  return { message: `${sentence(detail)}${next[status] ?? ''}`, detail };
}

/** Calls the API; answers the parsed JSON body or throws an ApiError. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const init: RequestInit = { method, credentials: 'same-origin', headers, cache: 'no-store' };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError('No connection to the service. Check your network; the app tries again by itself.', 0, '');
  }
  const date = Date.parse(res.headers.get('date') ?? '');
  if (!Number.isNaN(date)) clockSkew = date - Date.now();
  const text = await res.text();
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const errorBody = data && typeof data === 'object' ? (data as ErrorBody) : null;
    const { message, detail } = describe(res.status, errorBody, res.headers.get('retry-after'));
    const nextStep = typeof errorBody?.next_step === 'string' ? errorBody.next_step : undefined;
    const wait = res.status === 429 ? Number(errorBody?.retry_after ?? res.headers.get('retry-after')) : NaN;
    throw new ApiError(message, res.status, detail, nextStep, Number.isFinite(wait) && wait > 0 ? wait : undefined);
  }
  return data as T;
}

/** `encodeURIComponent` for ids in paths. */
export const seg = (id: string): string => encodeURIComponent(id);
