/**
 * The host an app is marked with (decisions §28): the host of its client_id when that is a URL (a
 * Client ID Metadata Document names the app's own site), else null: a registered client id (`c_`,
 * `rc_`) names no site, and the owner app then shows the client id itself. Never fetched.
 */
export function clientHost(clientId: string | null): string | null {
  if (clientId === null || !/^https?:\/\//i.test(clientId)) return null;
  try {
    return new URL(clientId).host;
  } catch {
    return null;
  }
}

/** What the owner is shown of an app: its client id and that host. */
export interface AppMark {
  clientId: string;
  clientHost: string | null;
}

/** The mark of an agent of kind `app`; null for every other agent (and an app without client id). */
export const appMark = (a: { kind: string; clientId: string | null }): AppMark | null =>
  (a.kind === 'app' && a.clientId !== null ? { clientId: a.clientId, clientHost: clientHost(a.clientId) } : null);

/**
 * What an approval event (notifications/messages.ts) carries of an app: a connected app's site
 * step-up is one call of a tool at `resource`. Empty for every other agent.
 */
export function appEvent(agent: { kind: string; clientId: string | null }, resource: string): { app?: { clientHost: string | null; resource: string } } {
  const mark = appMark(agent);
  return mark ? { app: { clientHost: mark.clientHost, resource } } : {};
}

/**
 * "<app name> (<client host>)" as the owner reads it. The browser approval names an app
 * `<client name> (<mark>)` already (oidc/app-agents.ts appName), so a name that carries the host is
 * shown as it is; without a host (a registered client id) the name alone.
 */
export function appLabel(name: string, host: string | null): string {
  if (host === null || name.endsWith(`(${host})`)) return name;
  return `${name} (${host})`;
}
