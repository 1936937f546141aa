import { badRequest } from '../errors.ts';
import { unreadableProblem } from '../readable-text.ts';
import { siteProblem } from '../approvals/request-rules.ts';
import { textDigestSet } from './text-digest.ts';
import { type Category, categoryOf } from './plan-categories.ts';

/**
 * PlanIn (decisions §20), checked in full before anything is stored: every refusal is a 400 naming
 * the step and the rule. Times arrive in Unix seconds; the draft keeps epoch ms like the store.
 */
export const PLAN_TITLE_MAX = 80;
export const PLAN_STEPS_MAX = 20;
export const PLAN_START_SLACK_SEC = 60;
export const PLAN_START_AHEAD_MAX_SEC = 30 * 86_400;
export const PLAN_WINDOW_MIN_SEC = 60;
export const PLAN_WINDOW_MAX_SEC = 86_400;
export const STEP_ID_PATTERN = /^[a-z0-9_-]{1,24}$/;
export const STEP_BUTTON_MAX = 80;
export const STEP_TEXTS_MAX = 4;
export const STEP_TEXT_MAX = 10_000;
export const STEP_PATH_MAX = 300;
export const STEP_USES_MAX = 5;
/** "/" then printable ASCII (space to tilde), the whole path at most 300 characters. */
const PATH_PATTERN = /^\/[\x20-\x7e]*$/;

export interface PlanStepIn {
  id?: string;
  url: string;
  path?: string;
  button: string;
  texts?: string[];
  after?: string[];
  uses?: number;
}

export interface PlanIn {
  title: string;
  start_at: number;
  end_at: number;
  steps: PlanStepIn[];
}

export interface PlanStepDraft {
  id: string;
  position: number;
  url: string;
  host: string;
  /** Exact path, or a prefix when it ends in `*` (kept as sent); null = any path. */
  path: string | null;
  button: string;
  category: Category;
  /** Sorted SHA-256 digests of the normalised texts (text-digest.ts). */
  textDigests: string[];
  after: string[];
  uses: number;
}

export interface PlanDraft {
  title: string;
  startAt: number;
  endAt: number;
  steps: PlanStepDraft[];
}

const isInt = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n);

function checkTitle(title: string): string {
  if (title.trim().length === 0 || [...title].length > PLAN_TITLE_MAX) throw badRequest(`title must be 1 to ${PLAN_TITLE_MAX} characters, not only spaces`);
  const unreadable = unreadableProblem('title', title);
  if (unreadable) throw badRequest(unreadable);
  return title;
}

function checkWindow(startAt: number, endAt: number, nowSec: number): void {
  if (!isInt(startAt) || !isInt(endAt)) throw badRequest('start_at and end_at must be whole Unix seconds');
  if (startAt < nowSec - PLAN_START_SLACK_SEC) throw badRequest('start_at is in the past (at most 60 s before now)');
  if (startAt > nowSec + PLAN_START_AHEAD_MAX_SEC) throw badRequest('start_at is more than 30 days ahead');
  const window = endAt - startAt;
  if (window < PLAN_WINDOW_MIN_SEC || window > PLAN_WINDOW_MAX_SEC) throw badRequest('end_at must be 60 s to 24 h after start_at');
}

function checkUrl(where: string, url: string): { url: string; host: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badRequest(`${where}.url is not a URL`);
  }
  if (parsed.protocol !== 'https:') throw badRequest(`${where}.url must be an https URL`);
  if (parsed.username !== '' || parsed.password !== '') throw badRequest(`${where}.url must not carry a user name or password`);
  const host = parsed.host.toLowerCase();
  if (siteProblem(host) !== null) throw badRequest(`${where}.url must name a host (letters, digits, dots, hyphens; no IPv6 literal)`);
  return { url: parsed.href, host };
}

function checkPath(where: string, path: string | undefined): string | null {
  if (path === undefined) return null;
  if (path.length > STEP_PATH_MAX || !PATH_PATTERN.test(path)) throw badRequest(`${where}.path must be "/" followed by printable ASCII, at most ${STEP_PATH_MAX} characters (a trailing "*" matches any rest)`);
  if (path.slice(0, -1).includes('*')) throw badRequest(`${where}.path may hold "*" only at its end`);
  return path;
}

function checkButton(where: string, button: string): string {
  if (button.trim().length === 0 || [...button].length > STEP_BUTTON_MAX) throw badRequest(`${where}.button must be 1 to ${STEP_BUTTON_MAX} characters, not only spaces`);
  const unreadable = unreadableProblem(`${where}.button`, button);
  if (unreadable) throw badRequest(unreadable);
  return button;
}

function checkTexts(where: string, texts: string[] | undefined): string[] {
  if (texts === undefined) return [];
  if (texts.length > STEP_TEXTS_MAX) throw badRequest(`${where}.texts holds at most ${STEP_TEXTS_MAX} texts`);
  for (const t of texts) {
    if (typeof t !== 'string' || t.length < 1 || t.length > STEP_TEXT_MAX) throw badRequest(`${where}.texts: each text is 1 to ${STEP_TEXT_MAX} characters`);
  }
  return textDigestSet(texts);
}

/** The checked plan, or a 400 naming the first broken rule. `nowSec` is the clock in Unix seconds. */
export function checkPlanIn(input: PlanIn, nowSec: number): PlanDraft {
  const title = checkTitle(input.title);
  checkWindow(input.start_at, input.end_at, nowSec);
  if (!Array.isArray(input.steps) || input.steps.length < 1 || input.steps.length > PLAN_STEPS_MAX) throw badRequest(`steps must hold 1 to ${PLAN_STEPS_MAX} steps`);
  const seen = new Set<string>();
  const steps: PlanStepDraft[] = input.steps.map((s, index) => {
    const position = index + 1;
    const where = `steps[${index}]`;
    const id = s.id ?? String(position);
    if (!STEP_ID_PATTERN.test(id)) throw badRequest(`${where}.id must be 1 to 24 of a-z, 0-9, "_" and "-"`);
    if (seen.has(id)) throw badRequest(`${where}.id "${id}" is used by an earlier step (a step without an id takes its position, 1-based)`);
    const { url, host } = checkUrl(where, s.url);
    const path = checkPath(where, s.path);
    const button = checkButton(where, s.button);
    const textDigests = checkTexts(where, s.texts);
    const after = [...new Set(s.after ?? [])];
    for (const a of after) if (!seen.has(a)) throw badRequest(`${where}.after names "${a}", which is not an earlier step`);
    const uses = s.uses ?? 1;
    if (!isInt(uses) || uses < 1 || uses > STEP_USES_MAX) throw badRequest(`${where}.uses must be 1 to ${STEP_USES_MAX}`);
    const category = categoryOf(button);
    if (category === 'publish' && textDigests.length === 0) throw badRequest(`${where} publishes ("${button}"): give the texts it will send in texts`);
    if ((category === 'delete' || category === 'unknown') && path === null) throw badRequest(`${where} ("${button}") deletes or is not recognised: give the page path it runs on in path`);
    seen.add(id);
    return { id, position, url, host, path, button, category, textDigests, after, uses };
  });
  return { title, startAt: input.start_at * 1000, endAt: input.end_at * 1000, steps };
}

/** Steps the owner may pre-approve: money and security steps always ask (decisions §20). */
export const preApprovable = (category: Category): boolean => category !== 'money' && category !== 'security';
