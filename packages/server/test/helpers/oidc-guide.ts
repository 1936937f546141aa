import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './child-process.ts';

// The registration docs/sites/oidc.md shows ("Register"), read from the guide itself so that the
// end-to-end test registers its sites with exactly that body: a redirect URI the set-ups do not
// serve then fails their sign-ins, rather than only reading wrong.

export const GUIDE = 'docs/sites/oidc.md';
/** The site the guide's examples are for; tests put their own site's address in its place. */
export const GUIDE_SITE = 'https://shop.example';

export type Registration = { name: string; redirect_uris: string[]; backchannel_logout_uri?: string };

export const readGuide = (): string => readFileSync(join(REPO_ROOT, GUIDE), 'utf8');

/** The `### Register` section: its curl call's JSON body, and the JSON block that shows the answer. */
export function registerExample(doc = readGuide()): { request: Registration; answer: Registration } {
  const section = doc.split('\n### Register\n')[1]?.split('\n### ')[0] ?? '';
  const body = /```sh\n[^`]*?curl -s "\$MANDATE\/api\/oidc\/clients"[^`]*? -d '([^']*)'/.exec(section)?.[1];
  const answer = /```json\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(body && answer, `${GUIDE}: "Register" holds a curl call POSTing JSON to /api/oidc/clients, and its answer`);
  return { request: JSON.parse(body) as Registration, answer: JSON.parse(answer) as Registration };
}

/** The Register example's body for a site at `siteUrl`; without its back-channel logout URI for a site that has no receiver. */
export function registrationAt(siteUrl: string, opts: { name: string; logout: boolean }): Registration {
  const { request } = registerExample();
  const at = (uri: string) => {
    assert.ok(uri.startsWith(`${GUIDE_SITE}/`), `${GUIDE}: ${uri} is not on ${GUIDE_SITE}`);
    return siteUrl + uri.slice(GUIDE_SITE.length);
  };
  const logout = opts.logout && request.backchannel_logout_uri !== undefined ? { backchannel_logout_uri: at(request.backchannel_logout_uri) } : {};
  return { name: opts.name, redirect_uris: request.redirect_uris.map(at), ...logout };
}
