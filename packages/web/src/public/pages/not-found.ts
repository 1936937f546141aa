import type { SiteContext } from '../context.ts';
import { html } from '../html.ts';
import { layout } from '../layout.ts';

/** The one 404 page of the public pages: the same for every unknown or malformed docs or legal path. */
export function notFoundPage(ctx: SiteContext): string {
  const main = html`
<div class="wrap narrow block">
  <h1>Page not found</h1>
  <p class="lead">There is no page at this address. It may have moved, or the link may be mistyped.</p>
  <ul>
    <li><a href="/docs">All documentation</a></li>
    ${ctx.docs.sections.map((s) => html`<li><a href="${s.path}">${s.title}</a></li>`)}
    <li><a href="/">The home page</a></li>
  </ul>
</div>`;
  return layout(ctx, { path: '/404', title: 'Page not found', description: 'This page does not exist.', noindex: true }, main);
}
