import type { SiteContext } from '../context.ts';
import type { DocSection } from '../docs/docs-tree.ts';
import { html, type SafeHtml } from '../html.ts';
import { layout } from '../layout.ts';

/** A section's pages as a list of links with their first paragraph: shared by /docs and section pages. */
export function pageList(section: DocSection): SafeHtml {
  return html`<ul class="doc-list">
    ${section.pages.map((p) => html`<li><a href="${p.path}">${p.title}</a>${p.description ? html`<p>${p.description}</p>` : ''}</li>`)}
  </ul>`;
}

export function docsIndexPage(ctx: SiteContext): string {
  const main = html`
<div class="wrap block">
  <h1>Documentation</h1>
  <p class="lead">Guides for everyone who works with Mandate. The full, generated API description is
  <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1); every page here is also available as Markdown by adding
  <code>.md</code> to its address, and <a href="/llms.txt">/llms.txt</a> lists them for AI assistants.</p>
  <div class="doc-sections">
    ${ctx.docs.sections.map((s) => html`
    <section class="card" aria-labelledby="section-${s.name}">
      <h2 id="section-${s.name}"><a href="${s.path}">${s.title}</a></h2>
      ${s.summary ? html`<p>${s.summary}</p>` : ''}
      ${pageList(s)}
    </section>`)}
  </div>
</div>`;
  return layout(ctx, {
    path: '/docs',
    title: 'Documentation',
    description: 'Mandate documentation: quickstarts for agent developers and sites, API reference, passkeys, and self-hosting.',
    nav: 'docs',
  }, main);
}
