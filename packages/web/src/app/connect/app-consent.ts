// The consent page of a person's browser at /oidc/authorize (decisions §28). The server checked the
// request before serving this page; the options come from /api/oidc/consent/start with the page's own
// query, then /approve or /deny (consent-flow.ts).
import { runConsent } from './consent-flow.ts';

runConsent({
  start: { path: '/api/oidc/consent/start', body: { authorize: location.search.slice(1) } },
  approvePath: '/api/oidc/consent/approve',
  denyPath: '/api/oidc/consent/deny',
  approvedText: 'Approved',
});
