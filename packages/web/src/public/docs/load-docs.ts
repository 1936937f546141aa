import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOC_NAME } from './doc-links.ts';

export interface DocSource {
  section: string;
  page: string;
  markdown: string;
}

export interface LoadedDocs {
  sources: DocSource[];
  /** Files and folders left out, and why; the server logs them at start. */
  warnings: string[];
}

/**
 * Reads `docs/{section}/{page}.md` once. Only names of `[a-z0-9-]` become pages, so a URL can only
 * ever name a file found here at start; symbolic links are skipped so nothing outside `docs/` is
 * read. New files appear at the next start without code changes.
 */
export function loadDocSources(docsDir: string): LoadedDocs {
  const sources: DocSource[] = [];
  const warnings: string[] = [];
  // A deployment without the docs folder still serves the other pages (and says why /docs is empty).
  if (!existsSync(docsDir)) return { sources, warnings: [`docs folder ${docsDir} not found: no documentation pages are served`] };
  for (const sectionEntry of readdirSync(docsDir, { withFileTypes: true })) {
    const section = sectionEntry.name;
    if (section.startsWith('.')) continue;
    if (!sectionEntry.isDirectory()) {
      // A symbolic link at the top (docs/scaling.md) is a shortcut for readers of the repository to a
      // page that is served from its section; anything else there is a mistake worth a warning.
      if (section.endsWith('.md') && !sectionEntry.isSymbolicLink()) warnings.push(`docs/${section}: not inside a section folder, not served`);
      continue;
    }
    if (!DOC_NAME.test(section)) {
      warnings.push(`docs/${section}/: section names are [a-z0-9-], not served`);
      continue;
    }
    for (const pageEntry of readdirSync(join(docsDir, section), { withFileTypes: true })) {
      const file = pageEntry.name;
      if (file.startsWith('.') || !file.endsWith('.md')) continue;
      const page = file.slice(0, -3);
      const path = join(docsDir, section, file);
      if (!DOC_NAME.test(page)) {
        warnings.push(`docs/${section}/${file}: page names are [a-z0-9-], not served`);
        continue;
      }
      if (!pageEntry.isFile() || lstatSync(path).isSymbolicLink()) {
        warnings.push(`docs/${section}/${file}: not a regular file, not served`);
        continue;
      }
      sources.push({ section, page, markdown: readFileSync(path, 'utf8') });
    }
  }
  return { sources, warnings };
}
