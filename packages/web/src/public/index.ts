import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sourceFile } from '../source-dir.ts';
import type { SiteContext } from './context.ts';
import { buildDocsTree } from './docs/docs-tree.ts';
import { loadDocSources } from './docs/load-docs.ts';
import { llmsTxt } from './machine/llms.ts';
import { robotsTxt } from './machine/robots.ts';
import { sitemapXml } from './machine/sitemap.ts';
import { docPage } from './pages/doc-page.ts';
import { docSectionPage } from './pages/doc-section.ts';
import { docsIndexPage } from './pages/docs-index.ts';
import { forShopsPage } from './pages/for-shops.ts';
import { homePage } from './pages/home.ts';
import { howItWorksPage } from './pages/how-it-works.ts';
import { legalPages } from './pages/legal.ts';
import { notFoundPage } from './pages/not-found.ts';
import { challengeAgentsTxt, challengePage } from './pages/challenge.ts';
import { type CheckView, checkPage } from './pages/check.ts';
import { pitchPage } from './pages/pitch.ts';
import { type CheckAgentView, checkAgentPage } from './pages/check-agent.ts';
import { markSvg, publicStylesheet } from './tokens.ts';

export interface PublicResponse {
  status: number;
  type: string;
  cache: string;
  body: string;
  /** Set on redirects. */
  location?: string;
}

export interface PublicSite {
  /** Every public address and its answer, rendered once at start. */
  pages: ReadonlyMap<string, PublicResponse>;
  /** Fastify route patterns whose unknown paths are answered by `fallback` (HTML 404 or a redirect). */
  fallbackRoutes: readonly string[];
  fallback(path: string): PublicResponse;
  /** Absolute URLs listed in the sitemap. */
  sitemapUrls: readonly string[];
  /**
   * /challenge for people (decisions §23): not in `pages`, since the server's /challenge route also
   * verifies agents; it serves this to requests without a pass.
   */
  challenge: PublicResponse;
  /** /check?site= (the HTML twin of readiness), rendered per request with the answer. */
  check(view: CheckView, status?: number): PublicResponse;
  /** Doc files left out (bad names, symbolic links); the server logs them. */
  warnings: readonly string[];
  /** `/tools/check-agent` with what was typed and the answer (rendered per request: it shows the check). */
  checkAgent(view: CheckAgentView): string;
}

export interface PublicSiteOptions {
  /** The service's public base URL (BASE_URL). */
  baseUrl: string;
  /** The docs folder; by default `docs/` at the repository root. */
  docsDir?: string;
  /** The registry package the agent tool comes from (AGENT_PACKAGE); none: this service's /download/agent. */
  agentPackage?: string | null;
}

export const DEFAULT_DOCS_DIR = fileURLToPath(sourceFile('../../../docs/'));
const CSS_PATH = '/assets/public.css';
const ICON_PATH = '/assets/public-icon.svg';

// Pages may change with any deploy, so caches keep them only briefly; the stylesheet's and icon's
// URLs carry their content hash, so they may be kept longer.
const HTML = 'text/html; charset=utf-8';
const SHORT_CACHE = 'public, max-age=300';
const ok = (body: string, type = HTML, cache = SHORT_CACHE): PublicResponse => ({ status: 200, type, cache, body });

/**
 * Renders the public pages of Mandate: `/`, `/how-it-works`, `/for-shops`, `/docs`, `/docs/{section}`,
 * `/docs/{section}/{page}` (and its `.md` source) for every file in `docs/`, `/legal/{doc}`,
 * `/robots.txt`, `/sitemap.xml`, `/llms.txt` and the stylesheet. Only these exact addresses exist, so
 * no request path ever reaches the file system.
 */
export function buildPublicSite(opts: PublicSiteOptions): PublicSite {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const css = publicStylesheet(readFileSync(sourceFile('public/public.css'), 'utf8'));
  const icon = markSvg();
  const version = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);
  const cssHref = `${CSS_PATH}?v=${version(css)}`;
  const iconHref = `${ICON_PATH}?v=${version(icon)}`;
  const loaded = loadDocSources(opts.docsDir ?? DEFAULT_DOCS_DIR);
  const ctx: SiteContext = { baseUrl, cssHref, iconHref, docs: buildDocsTree(loaded.sources) };

  const htmlPages = new Map<string, string>([
    ['/', homePage(ctx)],
    ['/how-it-works', howItWorksPage(ctx)],
    ['/for-shops', forShopsPage(ctx)],
    ['/pitch', pitchPage(ctx)],
    ['/docs', docsIndexPage(ctx)],
  ]);
  for (const section of ctx.docs.sections) {
    htmlPages.set(section.path, docSectionPage(ctx, section));
    for (const doc of section.pages) htmlPages.set(doc.path, docPage(ctx, doc));
  }
  for (const legal of legalPages(ctx)) htmlPages.set(legal.path, legal.body);

  // /challenge, /check and /tools/check-agent are answered by the server's own routes (they verify
  // agents, run checks), but are public pages like the others.
  const sitemapUrls = [...htmlPages.keys(), '/challenge', '/check', '/tools/check-agent'].map((path) => baseUrl + path);
  const pages = new Map<string, PublicResponse>([...htmlPages].map(([path, body]) => [path, ok(body)]));
  for (const section of ctx.docs.sections) {
    for (const doc of section.pages) pages.set(`${doc.path}.md`, ok(doc.markdown, 'text/markdown; charset=utf-8'));
  }
  pages.set('/challenge/agents.txt', ok(challengeAgentsTxt(baseUrl, opts.agentPackage ?? null), 'text/plain; charset=utf-8'));
  pages.set('/robots.txt', ok(robotsTxt(baseUrl), 'text/plain; charset=utf-8'));
  pages.set('/sitemap.xml', ok(sitemapXml(sitemapUrls), 'application/xml; charset=utf-8'));
  pages.set('/llms.txt', ok(llmsTxt(baseUrl, ctx.docs, opts.agentPackage ?? null), 'text/plain; charset=utf-8'));
  pages.set(CSS_PATH, ok(css, 'text/css; charset=utf-8', 'public, max-age=86400'));
  pages.set(ICON_PATH, ok(icon, 'image/svg+xml', 'public, max-age=86400'));

  const notFound: PublicResponse = { status: 404, type: HTML, cache: 'no-cache', body: notFoundPage(ctx) };
  return {
    pages,
    fallbackRoutes: ['/docs/*', '/legal', '/legal/*'],
    fallback(url) {
      // `/docs/agents/` -> `/docs/agents`: only ever to an address of this map, so never an open redirect.
      const path = url.split('?')[0] ?? '';
      const bare = path.replace(/\/+$/, '');
      if (bare !== path && htmlPages.has(bare)) {
        return { status: 301, type: 'text/plain; charset=utf-8', cache: SHORT_CACHE, body: `moved to ${bare}`, location: bare };
      }
      return notFound;
    },
    challenge: ok(challengePage(ctx, opts.agentPackage ?? null)),
    // A result is one person's answer: never kept by shared caches.
    check: (view, status = 200) => ({ status, type: HTML, cache: 'no-store', body: checkPage(ctx, view) }),
    sitemapUrls,
    warnings: loaded.warnings,
    checkAgent: (view) => checkAgentPage(ctx, view),
  };
}
