/**
 * Domain verification of an operator (decisions §17, §24): the operator publishes its line at
 * `<scheme>://<host[:port]>/.well-known/service-site.txt` (the origin of its redirect URIs), and
 * the service fetches that file through the one outbound guard. Stateless: the caller stores the result.
 */
import type { OutboundFetch } from '../../outbound/types.ts';
import { type LineKind, type SiteCheck, checkSiteFile } from '../oidc/site-file.ts';
import { verificationUrl } from '../oidc/site-origins.ts';

const OPERATOR_LINES: LineKind = { key: 'mandate-operator', others: 'operators' };

export const operatorVerificationLine = (operatorId: string, token: string): string => `${OPERATOR_LINES.key}=${operatorId}:${token}`;

/** The file for an origin such as `https://acme.example` or `http://127.0.0.1:4000`. */
export const operatorVerificationUrl = (origin: string): string => verificationUrl(origin);

/** Fetches the operator's file and looks for its line, on a line of its own. */
export function checkOperatorFile(fetch: OutboundFetch, origin: string, operatorId: string, token: string): Promise<SiteCheck> {
  return checkSiteFile(fetch, operatorVerificationUrl(origin), operatorVerificationLine(operatorId, token), operatorId, OPERATOR_LINES);
}
