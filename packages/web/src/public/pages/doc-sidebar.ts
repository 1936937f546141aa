import type { SiteContext } from '../context.ts';
import { html, type SafeHtml } from '../html.ts';

/** Every section and page, the current one marked: beside the text on a desktop, below it on a phone. */
export function docSidebar(ctx: SiteContext, currentPath: string): SafeHtml {
  const current = (path: string) => (path === currentPath ? html` aria-current="page"` : '');
  return html`<nav class="doc-nav" aria-label="Documentation">
    <p class="doc-nav-title"><a href="/docs"${current('/docs')}>All docs</a></p>
    ${ctx.docs.sections.map((s) => html`
    <p class="doc-nav-section"><a href="${s.path}"${current(s.path)}>${s.title}</a></p>
    <ul>
      ${s.pages.map((p) => html`<li><a href="${p.path}"${current(p.path)}>${p.title}</a></li>`)}
    </ul>`)}
  </nav>`;
}
