import type { SiteContext } from './context.ts';
import { html, type SafeHtml } from './html.ts';

export interface PageMeta {
  /** Site path, e.g. `/how-it-works`; also the canonical URL under BASE_URL. */
  path: string;
  /** The page's own title; the layout adds " · Mandate". */
  title: string;
  description: string;
  /** Which main navigation entry to mark as current. */
  nav?: 'how' | 'docs' | 'shops' | 'pitch' | 'challenge';
  /** Keeps a page out of search engines (the 404 page). */
  noindex?: boolean;
}

const NAV = [
  { key: 'how', href: '/how-it-works', label: 'How it works' },
  { key: 'docs', href: '/docs', label: 'Docs' },
  { key: 'shops', href: '/for-shops', label: 'For sites' },
  { key: 'pitch', href: '/pitch', label: 'Why Mandate' },
  { key: 'challenge', href: '/challenge', label: 'Try it' },
] as const;

/** The one layout of every public page: header navigation, main content, footer with legal links. */
export function layout(ctx: SiteContext, meta: PageMeta, main: SafeHtml): string {
  const fullTitle = meta.path === '/' ? meta.title : `${meta.title} · Mandate`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${fullTitle}</title>
<meta name="description" content="${meta.description}">
${meta.noindex ? html`<meta name="robots" content="noindex">` : html`<link rel="canonical" href="${ctx.baseUrl}${meta.path}">`}
<link rel="stylesheet" href="${ctx.cssHref}">
<link rel="icon" href="${ctx.iconHref}" type="image/svg+xml">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="site-header">
  <div class="wrap header-row">
    <a class="brand" href="/"><img class="brand-mark" src="${ctx.iconHref}" alt="" width="32" height="32">Mandate</a>
    <a class="nav-app" href="/app">Open the app</a>
    <nav class="main-nav" aria-label="Main">
      ${NAV.map((item) => html`<a href="${item.href}"${meta.nav === item.key ? html` aria-current="page"` : ''}>${item.label}</a>`)}
    </nav>
  </div>
</header>
<main id="main">
${main}
</main>
<footer class="site-footer">
  <div class="wrap footer-row">
    <p class="footer-about"><strong>Mandate</strong>: people approve, with a passkey, what their AI agents may do at each site. Open software you can run yourself.</p>
    <nav aria-label="Footer">
      <a href="/legal/privacy">Privacy</a>
      <a href="/legal/terms">Terms</a>
      <a href="/docs">Docs</a>
      <a href="/check">Check a site</a>
      <a href="/tools/check-agent">Check an agent</a>
      <a href="/openapi.json">OpenAPI</a>
      <a href="/llms.txt">llms.txt</a>
    </nav>
  </div>
</footer>
</body>
</html>
`.value;
}
