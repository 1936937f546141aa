import { readdirSync, readFileSync } from 'node:fs';
import { sourceFile } from '../../source-dir.ts';
import type { SiteContext } from '../context.ts';
import { DOC_NAME } from '../docs/doc-links.ts';
import { renderMarkdown } from '../docs/render-markdown.ts';
import { html, raw } from '../html.ts';
import { layout } from '../layout.ts';

export interface LegalPage {
  name: string;
  path: string;
  title: string;
  body: string;
}

const LEGAL_DIR = sourceFile('public/legal/');

/** Links in legal texts may only point at this site or at the web; nothing relative to a file. */
const legalLink = (href: string): string | null => (/^(\/|#|https?:|mailto:)/i.test(href) && !href.startsWith('//') ? href : null);

/**
 * `/legal/{doc}` from `src/public/legal/{doc}.md`, with `{{base_url}}` replaced by this service's address
 * so each instance names itself.
 */
export function legalPages(ctx: SiteContext): LegalPage[] {
  return readdirSync(LEGAL_DIR)
    .filter((file) => file.endsWith('.md') && DOC_NAME.test(file.slice(0, -3)))
    .sort()
    .map((file) => {
      const name = file.slice(0, -3);
      const markdown = readFileSync(new URL(file, LEGAL_DIR), 'utf8').replaceAll('{{base_url}}', ctx.baseUrl);
      const rendered = renderMarkdown(markdown, { resolveLink: legalLink });
      const title = rendered.title ?? name;
      const path = `/legal/${name}`;
      const main = html`
<div class="wrap narrow block">
  <article class="prose">
    ${raw(rendered.html)}
  </article>
</div>`;
      return { name, path, title, body: layout(ctx, { path, title, description: rendered.description || `${title} of the Mandate service.` }, main) };
    });
}
