/**
 * The one way the service fetches an address that someone else chose (decisions §24): push endpoints,
 * verification files, foreign directories, back-channel logout. See guarded-fetch.ts.
 */
export interface OutboundPolicy {
  /** OUTBOUND_ALLOW_LOOPBACK: also allow `http:` and the loopback range (development and tests only). */
  allowLoopback: boolean;
}

export interface OutboundRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface OutboundResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** At most the body cap (64 kB); a longer body is refused with `too_large`. */
  body: Buffer;
}

/** Why the guard refused or could not complete a fetch. */
export type OutboundRefusal = 'scheme' | 'url' | 'address' | 'dns' | 'timeout' | 'too_large' | 'network';

export class OutboundError extends Error {
  override readonly name = 'OutboundError';
  constructor(readonly reason: OutboundRefusal, message: string) {
    super(message);
  }
}

/** The guarded fetch's signature, so that senders can be given it (or a test's recorder) as a port. */
export type OutboundFetch = (url: string, request: OutboundRequest) => Promise<OutboundResponse>;
