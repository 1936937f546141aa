/**
 * Which hosts a web-push endpoint may name (PUSH_SERVICE_HOSTS, issue 22). A subscription's endpoint
 * is an address the browser (so, anyone) chose, and the service POSTs to it for every push: limited
 * to the known push services, an account can neither make the service POST to any public URL nor
 * register endpoints that never answer to tie up the senders. The outbound guard (decisions §24)
 * still applies on top.
 */

/** The browsers' push services: Chrome and Edge-on-Chromium (FCM), Firefox (Mozilla), Edge/Windows (WNS), Safari (Apple). */
export const DEFAULT_PUSH_SERVICE_HOSTS: readonly string[] = [
  'fcm.googleapis.com',
  'updates.push.services.mozilla.com',
  '*.push.services.mozilla.com',
  '*.notify.windows.com',
  'web.push.apple.com',
  '*.push.apple.com',
];

/** A host name, or `*.` and a domain (any host under it, not the domain itself). */
const PATTERN = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/;

export function isPushHostPattern(p: string): boolean {
  return PATTERN.test(p);
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

export interface PushHostPolicy {
  /** Null when the endpoint's host is accepted; else why not, naming the accepted hosts. */
  problem(endpoint: string): string | null;
}

/**
 * `hosts`: the accepted patterns, or null for any host (PUSH_SERVICE_HOSTS=*). `allowLoopback`
 * (OUTBOUND_ALLOW_LOOPBACK, development and tests): loopback hosts too, as the guard allows them.
 */
export function pushHostPolicy(hosts: readonly string[] | null, allowLoopback: boolean): PushHostPolicy {
  const exact = new Set(hosts?.filter((h) => !h.startsWith('*.')));
  const suffixes = (hosts ?? []).filter((h) => h.startsWith('*.')).map((h) => h.slice(1));
  const accepted = `${(hosts ?? []).join(', ')}${allowLoopback ? ' (and loopback: OUTBOUND_ALLOW_LOOPBACK)' : ''}`;
  return {
    problem(endpoint) {
      if (hosts === null) return null;
      let host: string;
      try {
        host = new URL(endpoint).hostname.toLowerCase();
      } catch {
        return 'the push endpoint is not a URL';
      }
      if (exact.has(host) || suffixes.some((s) => host.endsWith(s))) return null;
      if (allowLoopback && (LOOPBACK.has(host) || host.startsWith('127.'))) return null;
      return `the push endpoint's host ${host} is not a known web push service; this service accepts ${accepted} (PUSH_SERVICE_HOSTS)`;
    },
  };
}
