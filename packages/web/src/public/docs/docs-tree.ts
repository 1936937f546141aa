import type { DocSource } from './load-docs.ts';
import { resolveDocHref } from './doc-links.ts';
import { type Heading, renderMarkdown } from './render-markdown.ts';
import { comparePages, compareSections, sectionInfo, titleFromName } from './sections.ts';

export interface DocPage {
  section: string;
  page: string;
  /** `/docs/{section}/{page}` */
  path: string;
  title: string;
  description: string;
  html: string;
  headings: Heading[];
  markdown: string;
}

export interface DocSection {
  name: string;
  /** `/docs/{section}` */
  path: string;
  title: string;
  summary: string;
  pages: DocPage[];
}

export interface DocsTree {
  sections: DocSection[];
  find(section: string, page: string): DocPage | undefined;
}

/** Renders every doc once, with links between docs rewritten to their URLs, in listing order. */
export function buildDocsTree(sources: readonly DocSource[]): DocsTree {
  const known = new Set(sources.map((s) => `${s.section}/${s.page}`));
  const exists = (section: string, page: string) => known.has(`${section}/${page}`);
  const bySection = new Map<string, DocPage[]>();
  for (const source of sources) {
    const rendered = renderMarkdown(source.markdown, { resolveLink: (href) => resolveDocHref(href, source.section, exists) });
    const page: DocPage = {
      section: source.section,
      page: source.page,
      path: `/docs/${source.section}/${source.page}`,
      title: rendered.title ?? titleFromName(source.page),
      description: rendered.description,
      html: rendered.html,
      headings: rendered.headings,
      markdown: source.markdown,
    };
    bySection.set(source.section, [...(bySection.get(source.section) ?? []), page]);
  }
  const sections = [...bySection.keys()].sort(compareSections).map((name): DocSection => {
    const info = sectionInfo(name);
    const order = comparePages(name);
    const pages = (bySection.get(name) ?? []).sort((a, b) => order(a.page, b.page));
    return { name, path: `/docs/${name}`, title: info.title, summary: info.summary, pages };
  });
  const index = new Map(sections.flatMap((s) => s.pages.map((p) => [`${p.section}/${p.page}`, p] as const)));
  return { sections, find: (section, page) => index.get(`${section}/${page}`) };
}
