import { posix } from 'node:path';

/** Section and page names: the only characters a docs URL or file name may hold. */
export const DOC_NAME = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

const SAFE_SCHEMES = /^(https?:|mailto:)/i;
const ANY_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * Where a link written in `docs/{fromSection}/*.md` points on the site, or null when it has no
 * page here (a repository file such as `../../README.md`, a missing doc, or a scheme like
 * `javascript:`), in which case the renderer keeps only the link's text.
 * - `passkeys.md`, `../sites/quickstart.md#local-mode` -> `/docs/{section}/{page}` (+ fragment)
 * - `#anchor`, `/app`, `https://...`, `mailto:...` -> unchanged
 */
export function resolveDocHref(href: string, fromSection: string, exists: (section: string, page: string) => boolean): string | null {
  const trimmed = href.trim();
  if (trimmed === '') return null;
  if (trimmed.startsWith('#')) return trimmed;
  if (ANY_SCHEME.test(trimmed)) return SAFE_SCHEMES.test(trimmed) ? trimmed : null;
  if (trimmed.startsWith('//')) return null; // protocol-relative: another host, written by mistake
  if (trimmed.startsWith('/')) return trimmed;

  const hashAt = trimmed.indexOf('#');
  const pathPart = hashAt === -1 ? trimmed : trimmed.slice(0, hashAt);
  const fragment = hashAt === -1 ? '' : trimmed.slice(hashAt);
  if (!pathPart.endsWith('.md')) return null;
  // Resolved inside a virtual root: `..` can never climb above `/`, and only `/{section}/{page}.md` is kept.
  const resolved = posix.normalize(posix.join('/', fromSection, pathPart));
  const match = /^\/([^/]+)\/([^/]+)\.md$/.exec(resolved);
  if (!match) return null;
  const [, section = '', page = ''] = match;
  if (!DOC_NAME.test(section) || !DOC_NAME.test(page) || !exists(section, page)) return null;
  return `/docs/${section}/${page}${fragment}`;
}
