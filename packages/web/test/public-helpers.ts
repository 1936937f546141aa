import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Shared by the public-*.test.ts files (not a test file itself). */

export const BASE_URL = 'https://mandate.example.test';
export const REPO_DOCS_DIR = fileURLToPath(new URL('../../../docs/', import.meta.url));

export interface DocOnDisk {
  section: string;
  page: string;
  /** The text of the file's first `# ` line, markdown marks dropped. */
  title: string;
}

/** Every `docs/{section}/{page}.md`, found independently of the renderer's own loader. */
export function docsOnDisk(dir = REPO_DOCS_DIR): DocOnDisk[] {
  const docs: DocOnDisk[] = [];
  for (const section of readdirSync(dir, { withFileTypes: true })) {
    if (!section.isDirectory() || section.name.startsWith('.')) continue;
    for (const file of readdirSync(join(dir, section.name))) {
      if (!file.endsWith('.md')) continue;
      const text = readFileSync(join(dir, section.name, file), 'utf8');
      const heading = /^# (.+)$/m.exec(text)?.[1] ?? '';
      docs.push({ section: section.name, page: file.slice(0, -3), title: heading.replace(/[`*]/g, '').trim() });
    }
  }
  return docs;
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
export const unescapeHtml = (text: string): string => text.replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e] ?? e);

/** The values of every href and src attribute of a page. */
export function linksIn(html: string): string[] {
  return [...html.matchAll(/\s(?:href|src)="([^"]*)"/g)].map((m) => unescapeHtml(m[1] ?? ''));
}

/** Markup the strict CSP would block, or that should never be in our pages. */
export function inlineCode(html: string): string[] {
  const found: string[] = [];
  if (/<script\b/i.test(html)) found.push('<script>');
  if (/<style\b/i.test(html)) found.push('<style>');
  if (/\sstyle="/i.test(html)) found.push('style attribute');
  if (/\son[a-z]+="/i.test(html)) found.push('event handler attribute');
  if (/javascript:/i.test(html.replace(/<pre>[\s\S]*?<\/pre>|<code>[\s\S]*?<\/code>/g, ''))) found.push('javascript: URL');
  return found;
}

export const titleOf = (html: string): string => unescapeHtml(/<title>([^<]*)<\/title>/.exec(html)?.[1] ?? '');
export const metaDescriptionOf = (html: string): string => unescapeHtml(/<meta name="description" content="([^"]*)">/.exec(html)?.[1] ?? '');
export const canonicalOf = (html: string): string => /<link rel="canonical" href="([^"]*)">/.exec(html)?.[1] ?? '';
/** Visible text, roughly: tags dropped, entities decoded. */
export const textOf = (html: string): string => unescapeHtml(html.replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');
