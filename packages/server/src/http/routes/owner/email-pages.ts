/**
 * The small HTML pages behind mailed links (verify an address, undo a first passkey), in the look
 * of the public pages (their stylesheet and shield, served by @mandate/web). A page never acts: it
 * shows what the link is for and a button whose form POSTs the token (mail scanners open links;
 * only a person presses the button). No script, so the strict CSP of every page holds. Every value
 * is escaped.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError, badRequest } from '../../../domain/errors.ts';
import { prefersHtml } from '../../not-found.ts';

const FORM = 'application/x-www-form-urlencoded';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (text: string): string => text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);

export interface LinkPage {
  title: string;
  /** Paragraphs of plain text. */
  lines: string[];
  /**
   * A button that POSTs `token` to `action` (form-encoded); with `password`, a password field labelled
   * so; with `newPassword`, a field `new_password` for choosing one (at least `minLength` characters).
   */
  form?: { action: string; token: string; label: string; password?: string; newPassword?: { label: string; minLength: number } };
  /** Links to go on with (e.g. the app). */
  links?: { href: string; label: string }[];
}

export function renderLinkPage(page: LinkPage): string {
  const form = page.form
    ? `<form method="post" action="${esc(page.form.action)}"><input type="hidden" name="token" value="${esc(page.form.token)}">${page.form.password === undefined ? '' : `<p><label>${esc(page.form.password)}<br><input type="password" name="password" required maxlength="1024" autocomplete="current-password"></label></p>`}${page.form.newPassword === undefined ? '' : `<p><label>${esc(page.form.newPassword.label)}<br><input type="password" name="new_password" required minlength="${page.form.newPassword.minLength}" maxlength="1024" autocomplete="new-password"></label></p>`}<p class="actions"><button type="submit" class="button" style="font: inherit; cursor: pointer">${esc(page.form.label)}</button></p></form>`
    : '';
  const links = page.links?.length ? `<p class="actions">${page.links.map((l, i) => `<a class="button${i ? ' secondary' : ''}" href="${esc(l.href)}">${esc(l.label)}</a>`).join(' ')}</p>` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${esc(page.title)} · Mandate</title>
<link rel="stylesheet" href="/assets/public.css">
<link rel="icon" href="/assets/public-icon.svg" type="image/svg+xml">
</head>
<body>
<header class="site-header">
  <div class="wrap header-row">
    <a class="brand" href="/"><img class="brand-mark" src="/assets/public-icon.svg" alt="" width="32" height="32">Mandate</a>
    <a class="nav-app" href="/app">Open the app</a>
  </div>
</header>
<main id="main">
<div class="wrap narrow block">
  <h1>${esc(page.title)}</h1>
  ${page.lines.map((l, i) => `<p${i === 0 ? ' class="lead"' : ''}>${esc(l)}</p>`).join('\n  ')}
  ${form}${links}
</div>
</main>
</body>
</html>
`;
}

/** Sends a page: never cached (it carries a token or an outcome), never shown to another site. */
export function sendLinkPage(reply: FastifyReply, status: number, page: LinkPage): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').type('text/html; charset=utf-8').send(renderLinkPage(page));
}

/**
 * Registers `routes` in a scope of their own that also reads form-encoded bodies (the pages'
 * buttons), as an object of strings; the rest of the API stays JSON only.
 */
export async function withFormBodies(base: FastifyInstance, routes: (scope: FastifyInstance) => Promise<void>): Promise<void> {
  await base.register(async (scope) => {
    scope.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: 8 * 1024 }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });
    await routes(scope);
  });
}

/** The page for a refusal shown to a browser (too many attempts, say): what happened and what to do. */
export function refusalPage(err: AppError, title: string): { status: number; page: LinkPage } {
  if (err.status === 429) {
    const minutes = Math.max(1, Math.ceil(Number(err.extra.retry_after ?? 60) / 60));
    return { status: 429, page: { title, lines: [`Too many attempts from this address. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`], links: [{ href: '/app', label: 'Open the app' }] } };
  }
  return { status: err.status, page: { title, lines: [sentence(err.detail)], links: [{ href: '/app', label: 'Open the app' }] } };
}

/** The domain's terse text as a sentence on a page. */
export const sentence = (text: string): string => {
  const t = text.trim();
  const first = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
};

/**
 * The GET behind a mailed link: `preview` reads the link without using it. A browser gets the page
 * `shown` makes, or a page for a bad link or a refusal; any other client the usual JSON: what
 * `preview` found, or `{detail}` errors.
 */
export async function answerLinkPreview<T>(
  reply: FastifyReply,
  accept: string | undefined,
  link: { title: string; preview: () => Promise<T | undefined>; badDetail: string; badPage: LinkPage; page: (shown: T) => LinkPage },
): Promise<FastifyReply> {
  const html = prefersHtml(accept);
  let shown: T | undefined;
  try {
    shown = await link.preview();
  } catch (e) {
    if (!html || !(e instanceof AppError) || e.status >= 500) throw e;
    const { status, page } = refusalPage(e, link.title);
    return sendLinkPage(reply, status, page);
  }
  if (shown === undefined) {
    if (!html) throw badRequest(link.badDetail);
    return sendLinkPage(reply, 400, link.badPage);
  }
  return sendLinkPage(reply, 200, link.page(shown));
}

/**
 * The POST a link page's button sends: `confirm` uses the link. A browser (the form post) gets the
 * page `done` makes, or a page for a bad link or a refusal; any other client the JSON answer or
 * `{detail}` errors.
 */
export async function answerLinkConfirm<T>(
  reply: FastifyReply,
  accept: string | undefined,
  link: { title: string; confirm: () => Promise<T>; badPage: LinkPage; done: (answer: T) => LinkPage },
): Promise<T | FastifyReply> {
  const asPage = prefersHtml(accept);
  try {
    const answer = await link.confirm();
    if (!asPage) return answer;
    return sendLinkPage(reply, 200, link.done(answer));
  } catch (e) {
    if (!asPage || !(e instanceof AppError) || e.status >= 500) throw e;
    if (e.status === 400) return sendLinkPage(reply, 400, link.badPage);
    const { status, page } = refusalPage(e, link.title);
    return sendLinkPage(reply, status, page);
  }
}
