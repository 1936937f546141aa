import { readFileSync } from 'node:fs';
import { sourceFile } from '../source-dir.ts';

/**
 * The colours and type of Mandate (CSS custom properties), written once at the top of the owner app's
 * stylesheet and served ahead of the public pages' own rules, so both draw on one palette. They live
 * in app.css because the app's offline shell serves that one file as it is; this reads the block
 * between its two markers.
 */
const APP_CSS = sourceFile('app/shell/app.css');
export const TOKENS_START = '/* ==== Mandate tokens:';
export const TOKENS_END = '/* ==== end of Mandate tokens ==== */';

export function sharedTokens(appCss: string = readFileSync(APP_CSS, 'utf8')): string {
  const start = appCss.indexOf(TOKENS_START);
  const end = appCss.indexOf(TOKENS_END);
  if (start !== 0 || end < 0) throw new Error('app/shell/app.css must begin with the Mandate tokens block (its start and end markers)');
  return appCss.slice(0, end + TOKENS_END.length);
}

/** The public stylesheet as served: the shared tokens, then the public pages' own rules. */
export const publicStylesheet = (ownCss: string): string => `${sharedTokens()}\n\n${ownCss}`;

/** The one mark of Mandate (the app's shield), also the public pages' icon. */
export const markSvg = (): string => readFileSync(sourceFile('app/icons/icon.svg'), 'utf8');
