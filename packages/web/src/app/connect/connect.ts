// The consent page (/connect, decisions §17). The server has checked the link (operator on, redirect
// URI registered, PKCE S256) before serving this page; the options come from /api/connect/start with the
// link's fields, then /finish or /deny (consent-flow.ts).
import { runConsent } from './consent-flow.ts';

const FIELDS = ['operator', 'redirect_uri', 'state', 'code_challenge', 'code_challenge_method'] as const;

const query = new URLSearchParams(location.search);
const link: Record<string, string> = {};
for (const f of FIELDS) {
  const v = query.get(f);
  if (v !== null) link[f] = v;
}

runConsent({ start: { path: '/api/connect/start', body: link }, approvePath: '/api/connect/finish', denyPath: '/api/connect/deny', approvedText: 'Connected' });
