import type { SiteContext } from '../context.ts';
import type { DocPage } from '../docs/docs-tree.ts';
import { html, raw, type SafeHtml } from '../html.ts';
import { layout } from '../layout.ts';
import { docSidebar } from './doc-sidebar.ts';

/** One rendered doc, with the section's breadcrumb, the page's own contents list and the docs navigation. */
export function docPage(ctx: SiteContext, doc: DocPage): string {
  const section = ctx.docs.sections.find((s) => s.name === doc.section);
  const contents = doc.headings.filter((h) => h.depth === 2);
  const main = html`
<div class="wrap doc-layout">
  <article class="prose">
    <nav class="breadcrumb" aria-label="Breadcrumb"><a href="/docs">Docs</a> › <a href="/docs/${doc.section}">${section?.title ?? doc.section}</a></nav>
    ${raw(withContents(doc.html, contents.length > 2 ? html`
    <details class="toc">
      <summary>On this page</summary>
      <ul>${contents.map((h) => html`<li><a href="#${h.id}">${h.text}</a></li>`)}</ul>
    </details>` : null))}
    <p class="doc-source">This page as Markdown: <a href="${doc.path}.md">${doc.path}.md</a></p>
  </article>
  ${docSidebar(ctx, doc.path)}
</div>`;
  return layout(ctx, {
    path: doc.path,
    title: doc.title,
    description: doc.description || `${doc.title}: Mandate documentation.`,
    nav: 'docs',
  }, main);
}

/** The contents list goes right after the page's title (its first `h1`), or first when there is none. */
function withContents(body: string, contents: SafeHtml | null): string {
  if (!contents) return body;
  const end = body.indexOf('</h1>');
  return end === -1 ? contents.value + body : body.slice(0, end + 5) + contents.value + body.slice(end + 5);
}
