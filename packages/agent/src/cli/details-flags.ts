import { type ApprovalDetails, DETAILS_SUMMARY_MAX_LENGTH, detailsDigestOf, isDetailsDigest, isDetailsSummary } from '@mandate/protocol';
import type { OptionValues } from './command.ts';
import { UsageError } from './exit-codes.ts';
import { str } from './values.ts';

/**
 * `--summary`, `--details-json` and `--digest` of `stepup` and `approve` (decisions §29): the
 * details the owner's approval is bound to. The summary is what the owner reads on the card; the
 * digest (base64url SHA-256 of the RFC 8785 form) is what the passkey signs and the step-up token
 * carries. `--details-json` computes it here from the JSON the action sends; `--digest` takes one
 * made elsewhere (a site that gave it, another language). Every mistake is a usage error naming
 * the flag, before anything is sent.
 */

export const DETAILS_OPTIONS = {
  summary: { type: 'string' },
  'details-json': { type: 'string' },
  digest: { type: 'string' },
} as const;

export const DETAILS_USAGE = '[--summary TEXT (--details-json JSON | --digest DIGEST)]';

export const DETAILS_HELP = `  --summary TEXT       what the owner approves, shown on the card exactly as written (1 to ${DETAILS_SUMMARY_MAX_LENGTH}
                       characters, lines kept); the approval is bound to exactly these details
  --details-json JSON  with --summary: the JSON the action sends (e.g. the request body); its
                       digest (SHA-256 of the RFC 8785 canonical form) is what the passkey signs
  --digest DIGEST      with --summary, instead of --details-json: a digest made elsewhere
                       (base64url SHA-256, 43 characters)`;

/** The details the flags give, or undefined when none of the three is given. */
export function detailsFromFlags(values: OptionValues, command: string): ApprovalDetails | undefined {
  const summary = str(values, 'summary');
  const json = str(values, 'details-json');
  const given = str(values, 'digest');
  if (summary === undefined && json === undefined && given === undefined) return undefined;
  if (summary === undefined) throw new UsageError(`--${json !== undefined ? 'details-json' : 'digest'} needs --summary: what the owner reads on the card`, command);
  if (json !== undefined && given !== undefined) throw new UsageError('give --details-json or --digest, not both', command);
  if (json === undefined && given === undefined) throw new UsageError('--summary needs --details-json JSON or --digest DIGEST: the details the approval is bound to', command);
  if (!isDetailsSummary(summary)) {
    throw new UsageError(`--summary must be 1 to ${DETAILS_SUMMARY_MAX_LENGTH} printable characters (line feeds allowed; no other control or invisible characters)`, command);
  }
  const digest = json !== undefined ? digestOfJson(json, command) : (given ?? '');
  if (!isDetailsDigest(digest)) throw new UsageError('--digest must be base64url SHA-256: 43 characters of A-Z a-z 0-9 - _', command);
  return { summary, digest };
}

function digestOfJson(text: string, command: string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--details-json is not JSON: ${e instanceof Error ? e.message : String(e)}`, command);
  }
  try {
    return detailsDigestOf(value);
  } catch (e) {
    // JSON.parse accepts what RFC 8785 cannot write, such as a lone surrogate ("\ud800").
    throw new UsageError(`--details-json has no canonical form (RFC 8785): ${e instanceof Error ? e.message : String(e)}`, command);
  }
}
