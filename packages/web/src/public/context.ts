import type { DocsTree } from './docs/docs-tree.ts';

/** What every public page is rendered with, built once at start. */
export interface SiteContext {
  /** The service's public base URL (BASE_URL), no trailing slash: for canonical and other absolute links. */
  baseUrl: string;
  /** The stylesheet's URL, versioned by its content so it may be cached. */
  cssHref: string;
  /** The favicon's URL (SVG), versioned the same way. */
  iconHref: string;
  docs: DocsTree;
}

/** The URL of a doc page when that file exists, otherwise `fallback`: pages never link to a missing doc. */
export function docHref(ctx: SiteContext, section: string, page: string, fallback = '/docs'): string {
  return ctx.docs.find(section, page)?.path ?? fallback;
}

export const hasDoc = (ctx: SiteContext, section: string, page: string): boolean => ctx.docs.find(section, page) !== undefined;
