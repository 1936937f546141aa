import { Marked, type Tokens } from 'marked';
import { escapeHtml } from '../html.ts';

export interface Heading {
  depth: number;
  id: string;
  text: string;
}

export interface RenderedMarkdown {
  /** Text of the first `# ` heading, or null when the document has none. */
  title: string | null;
  /** The introduction's first paragraph as plain text, shortened for a meta description; '' when there is none. */
  description: string;
  html: string;
  headings: Heading[];
}

export interface RenderOptions {
  /** Maps a link's href to where it points on the site; null keeps the link's text only. */
  resolveLink(href: string): string | null;
}

/** Ids the layout itself uses; a heading of that name is numbered instead (`# Main` -> `main-1`). */
const LAYOUT_IDS = ['main'];

/** GitHub-like heading ids: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
export function slugger(): (text: string) => string {
  const seen = new Map<string, number>(LAYOUT_IDS.map((id) => [id, 1]));
  return (text) => {
    const base = text.toLowerCase().replace(/[^\p{L}\p{N}\s-]/gu, '').trim().replace(/\s+/g, '-') || 'section';
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return count === 0 ? base : `${base}-${count}`;
  };
}

/** Plain text of inline markdown: link text kept, code ticks and emphasis marks dropped. */
export function plainText(markdown: string): string {
  return markdown
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    // Emphasis marks only where they open or close a word: `DATA_DIR` and `a*b` keep theirs.
    .replace(/(^|[^\p{L}\p{N}])[*_]+(?=[\p{L}\p{N}])/gu, '$1')
    .replace(/([\p{L}\p{N}])[*_]+(?![\p{L}\p{N}])/gu, '$1')
    .replace(/<[^>]*>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

export function shorten(text: string, max = 180): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const lastSpace = cut.lastIndexOf(' ');
  return `${(lastSpace > max / 2 ? cut.slice(0, lastSpace) : cut).replace(/[,;:.\s]+$/, '')}…`;
}

/**
 * Renders one markdown document. Docs are our own files, but raw HTML in them is still shown as text
 * (comments are dropped): the pages carry no markup, inline style or script that the renderer did
 * not write, which keeps them within the strict CSP. Code is escaped; tables get a scrolling wrapper.
 */
export function renderMarkdown(markdown: string, opts: RenderOptions): RenderedMarkdown {
  const slug = slugger();
  const headings: Heading[] = [];
  let title: string | null = null;

  const marked = new Marked({
    gfm: true,
    tokenizer: {
      // No links from bare text. GFM would turn every `http://...`, `www....` and `a@b.example` in
      // prose into a link, and the docs write such text only as an example: "http://localhost" (which
      // would point at port 80 of the reader's machine), "you@example.com". A link the docs mean is
      // written as one: `[text](url)` or `<https://...>`. (Returning undefined, not false: false
      // would fall back to marked's own tokenizer.)
      url(): undefined {
        return undefined;
      },
    },
    renderer: {
      heading({ tokens, depth, text }: Tokens.Heading): string {
        const plain = plainText(text);
        const id = slug(plain);
        if (depth === 1 && title === null) title = plain;
        headings.push({ depth, id, text: plain });
        const inner = this.parser.parseInline(tokens);
        const anchor = depth > 1 ? ` <a class="anchor" href="#${id}" aria-label="Link to this section">#</a>` : '';
        return `<h${depth} id="${id}">${inner}${anchor}</h${depth}>\n`;
      },
      link({ href, title: linkTitle, tokens }: Tokens.Link): string {
        const inner = this.parser.parseInline(tokens);
        const target = opts.resolveLink(href);
        if (target === null) return inner;
        const titleAttr = linkTitle ? ` title="${escapeHtml(linkTitle)}"` : '';
        return `<a href="${escapeHtml(target)}"${titleAttr}>${inner}</a>`;
      },
      image({ text }: Tokens.Image): string {
        return escapeHtml(text);
      },
      html({ text }: Tokens.HTML | Tokens.Tag): string {
        const withoutComments = text.replace(/<!--[\s\S]*?-->/g, '');
        return withoutComments.trim() === '' ? '' : escapeHtml(withoutComments);
      },
      code({ text, lang }: Tokens.Code): string {
        const language = (lang ?? '').match(/^[a-z0-9+#-]+/i)?.[0] ?? '';
        const cls = language ? ` class="language-${escapeHtml(language)}"` : '';
        return `<pre><code${cls}>${escapeHtml(text)}</code></pre>\n`;
      },
    },
  });

  const tokens = marked.lexer(markdown);
  // The introduction: a paragraph before the first section heading. A paragraph deeper in the text
  // would describe one section, not the page.
  const firstSection = tokens.findIndex((t) => t.type === 'heading' && (t as Tokens.Heading).depth > 1);
  const intro = firstSection === -1 ? tokens : tokens.slice(0, firstSection);
  const firstParagraph = intro.find((t): t is Tokens.Paragraph => t.type === 'paragraph');
  const body = marked.parser(tokens)
    .replace(/<table>/g, '<div class="table-wrap"><table>')
    .replace(/<\/table>/g, '</table></div>');
  return { title, description: shorten(plainText(firstParagraph?.text ?? '')), html: body, headings };
}
