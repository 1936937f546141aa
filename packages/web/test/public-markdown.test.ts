import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildPublicSite } from '../src/index.ts';
import { resolveDocHref } from '../src/public/docs/doc-links.ts';
import { loadDocSources } from '../src/public/docs/load-docs.ts';
import { renderMarkdown } from '../src/public/docs/render-markdown.ts';
import { inlineCode, linksIn, textOf } from './public-helpers.ts';

const known = new Set(['agents/quickstart', 'sites/quickstart', 'reference/api', 'reference/passkeys']);
const exists = (section: string, page: string) => known.has(`${section}/${page}`);

describe('links between docs', () => {
  const cases: Array<[href: string, from: string, expected: string | null]> = [
    ['passkeys.md', 'reference', '/docs/reference/passkeys'],
    ['./passkeys.md#challenges', 'reference', '/docs/reference/passkeys#challenges'],
    ['../sites/quickstart.md', 'agents', '/docs/sites/quickstart'],
    ['../sites/quickstart.md#local-mode-outline', 'agents', '/docs/sites/quickstart#local-mode-outline'],
    ['../../../../sites/quickstart.md', 'agents', '/docs/sites/quickstart'], // `..` cannot leave the docs root
    ['../sites/missing.md', 'agents', null],
    ['../../README.md', 'agents', null],
    ['../../examples/quickstart/site.ts', 'sites', null],
    ['../Sites/quickstart.md', 'agents', null],
    ['quickstart', 'agents', null],
    ['#errors', 'reference', '#errors'],
    ['/app', 'agents', '/app'],
    ['/openapi.json', 'reference', '/openapi.json'],
    ['https://www.rfc-editor.org/rfc/rfc9449', 'agents', 'https://www.rfc-editor.org/rfc/rfc9449'],
    ['mailto:ops@example.com', 'operations', 'mailto:ops@example.com'],
    ['javascript:alert(1)', 'agents', null],
    ['JavaScript:alert(1)', 'agents', null],
    ['data:text/html,<script>alert(1)</script>', 'agents', null],
    ['//evil.example/x.md', 'agents', null],
    ['', 'agents', null],
  ];
  for (const [href, from, expected] of cases) {
    it(`${JSON.stringify(href)} in ${from}/ -> ${JSON.stringify(expected)}`, () => {
      assert.equal(resolveDocHref(href, from, exists), expected);
    });
  }
});

describe('markdown rendering', () => {
  const render = (md: string, section = 'agents') => renderMarkdown(md, { resolveLink: (href) => resolveDocHref(href, section, exists) });

  it('takes the title from the first level-1 heading and the description from the first paragraph', () => {
    const r = render('# Agent `quickstart`: go\n\nFor **developers** of [agents](../sites/quickstart.md), with `DATA_DIR`.\n\nMore.\n');
    assert.equal(r.title, 'Agent quickstart: go');
    assert.equal(r.description, 'For developers of agents, with DATA_DIR.');
  });

  it('gives every heading an id, numbering repeats', () => {
    const r = render('# Title\n\n## Errors & limits\n\n## Errors & limits\n\n### Step 1. Make a key\n');
    assert.match(r.html, /<h1 id="title">Title<\/h1>/);
    assert.match(r.html, /<h2 id="errors-limits">Errors &amp; limits <a class="anchor" href="#errors-limits"/);
    assert.match(r.html, /<h2 id="errors-limits-1">/);
    assert.match(r.html, /<h3 id="step-1-make-a-key">/);
    assert.deepEqual(r.headings.map((h) => h.id), ['title', 'errors-limits', 'errors-limits-1', 'step-1-make-a-key']);
  });

  it('rewrites links between docs and keeps only the text of links with no page here', () => {
    const r = render('See [the site guide](../sites/quickstart.md#verify), [the README](../../README.md), [x](javascript:alert(1)) and [RFC 9449](https://www.rfc-editor.org/rfc/rfc9449).');
    assert.deepEqual(linksIn(r.html), ['/docs/sites/quickstart#verify', 'https://www.rfc-editor.org/rfc/rfc9449']);
    assert.match(textOf(r.html), /the README, x and RFC 9449/);
    assert.doesNotMatch(r.html, /javascript:/);
  });

  it('links only what is written as a link: bare URLs and addresses in prose stay text', () => {
    const r = render('Cookie `session` on http://localhost, mail you@example.com, see www.example.com or http://127.0.0.1:8080/app.\n\nBut <https://www.rfc-editor.org/rfc/rfc9449> and [RFC 9449](https://www.rfc-editor.org/rfc/rfc9449) are links.\n');
    assert.deepEqual(linksIn(r.html), ['https://www.rfc-editor.org/rfc/rfc9449', 'https://www.rfc-editor.org/rfc/rfc9449']);
    assert.match(textOf(r.html), /on http:\/\/localhost, mail you@example\.com, see www\.example\.com or http:\/\/127\.0\.0\.1:8080\/app\./);
  });

  it('escapes code blocks and inline code', () => {
    const r = render('```html\n<script>alert("x")</script>\n```\n\nInline `<b onclick="x()">` too.\n');
    assert.match(r.html, /<pre><code class="language-html">&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;<\/code><\/pre>/);
    assert.match(r.html, /<code>&lt;b onclick=&quot;x\(\)&quot;&gt;<\/code>/);
    assert.deepEqual(inlineCode(r.html), []);
  });

  it('shows raw HTML as text and drops HTML comments', () => {
    const r = render('<!-- from examples/quickstart/agent.ts -->\n\n<div style="color:red" onclick="steal()">hi</div>\n\nText <img src=x onerror=alert(1)> and <span style="x">y</span>.\n\n![logo](x.png)\n');
    assert.doesNotMatch(r.html, /<!--|from examples/);
    assert.deepEqual(inlineCode(r.html), []);
    assert.doesNotMatch(r.html, /<div|<img|<span/);
    assert.match(r.html, /&lt;div style=&quot;color:red&quot;/);
    assert.match(r.html, /logo/);
  });

  it('never gives a heading an id the layout uses', () => {
    assert.match(render('# Main\n').html, /<h1 id="main-1">/);
  });

  it('wraps tables so that they scroll inside their own box on a phone', () => {
    const r = render('| a | b |\n|---|---|\n| 1 | 2 |\n');
    assert.match(r.html, /^<div class="table-wrap"><table>[\s\S]*<\/table><\/div>\s*$/);
  });
});

describe('the docs folder', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'mandate-docs-'));
    const write = (path: string, text: string) => {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    write('agents/quickstart.md', '# Agent quickstart\n\nStart here. See [the new guide](../guides/brand-new.md#part-two).\n');
    write('guides/brand-new.md', '# A brand new guide\n\nWritten after the code.\n\n## Part two\n\nBack to [the quickstart](../agents/quickstart.md).\n');
    write('guides/Upper-Case.md', '# Not served\n');
    write('guides/under_score.md', '# Not served\n');
    write('guides/notes.txt', 'not markdown');
    write('Bad Section/page.md', '# Not served\n');
    write('stray.md', '# Not in a section\n');
    symlinkSync('/etc/passwd', join(dir, 'guides', 'evil.md'));
    // A shortcut at the top for readers of the repository (as docs/scaling.md): no page, no warning.
    symlinkSync(join('agents', 'quickstart.md'), join(dir, 'shortcut.md'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('serves only [a-z0-9-] names of regular files inside section folders, and says what it left out', () => {
    const loaded = loadDocSources(dir);
    assert.deepEqual(loaded.sources.map((s) => `${s.section}/${s.page}`).sort(), ['agents/quickstart', 'guides/brand-new']);
    const warnings = loaded.warnings.join('\n');
    for (const left of ['Upper-Case.md', 'under_score.md', 'Bad Section', 'stray.md', 'evil.md']) assert.ok(warnings.includes(left), `no warning for ${left}`);
    assert.ok(!warnings.includes('shortcut.md'), 'a top-level symbolic link is a shortcut, not a mistake');
    assert.doesNotMatch(loaded.sources.map((s) => s.markdown).join(''), /root:/);
  });

  it('a doc file added later appears in /docs, its section, the sitemap and llms.txt without code changes', () => {
    const site = buildPublicSite({ baseUrl: 'https://m.example/', docsDir: dir });
    const page = site.pages.get('/docs/guides/brand-new');
    assert.equal(page?.status, 200);
    assert.match(page?.body ?? '', /<title>A brand new guide · Mandate<\/title>/);
    assert.ok(linksIn(page?.body ?? '').includes('/docs/agents/quickstart'), 'links between docs are rewritten');
    assert.ok(linksIn(site.pages.get('/docs/agents/quickstart')?.body ?? '').includes('/docs/guides/brand-new#part-two'));
    assert.ok(linksIn(site.pages.get('/docs')?.body ?? '').includes('/docs/guides/brand-new'));
    assert.ok(linksIn(site.pages.get('/docs/guides')?.body ?? '').includes('/docs/guides/brand-new'));
    assert.match(site.pages.get('/sitemap.xml')?.body ?? '', /<loc>https:\/\/m\.example\/docs\/guides\/brand-new<\/loc>/);
    assert.match(site.pages.get('/llms.txt')?.body ?? '', /^- \[A brand new guide\]\(https:\/\/m\.example\/docs\/guides\/brand-new\.md\): Written after the code\.$/m);
    assert.equal(site.pages.get('/docs/guides/brand-new.md')?.type, 'text/markdown; charset=utf-8');
    for (const missing of ['/docs/guides/evil', '/docs/guides/Upper-Case', '/docs/guides/under_score', '/docs/stray', '/docs/shortcut']) {
      assert.equal(site.pages.get(missing), undefined, missing);
      assert.equal(site.fallback(missing).status, 404);
    }
  });

  it('without a docs folder the other pages are still served, and the log says why', () => {
    const site = buildPublicSite({ baseUrl: 'https://m.example', docsDir: join(dir, 'nowhere') });
    assert.equal(site.pages.get('/')?.status, 200);
    assert.equal(site.pages.get('/docs')?.status, 200);
    assert.match(site.warnings.join('\n'), /docs folder .* not found/);
  });

  it('pages do not link to docs that do not exist', () => {
    const site = buildPublicSite({ baseUrl: 'https://m.example', docsDir: dir });
    const docPaths = new Set([...site.pages.keys()]);
    for (const [path, answer] of site.pages) {
      if (!answer.type.startsWith('text/html')) continue;
      for (const link of linksIn(answer.body)) {
        if (link.startsWith('/docs')) assert.ok(docPaths.has(link.split('#')[0] ?? ''), `${path} links to ${link}`);
      }
    }
  });
});
