import { UsageError } from './exit-codes.ts';
import type { OptionValues } from './command.ts';

/** Typed readers for parsed options; each names the flag in its error. */

export function str(values: OptionValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

export function required(values: OptionValues, name: string, command: string): string {
  const v = str(values, name);
  if (v === undefined || v === '') throw new UsageError(`--${name} is required`, command);
  return v;
}

export function flag(values: OptionValues, name: string): boolean {
  return values[name] === true;
}

export function list(values: OptionValues, name: string): string[] {
  const v = values[name];
  const items = (Array.isArray(v) ? v : [v]).filter((s): s is string => typeof s === 'string');
  return items.flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '');
}

/** A number of seconds given as a flag, returned in ms. */
export function seconds(values: OptionValues, name: string, command: string, opts: { min: number; max: number }): number | undefined {
  const v = str(values, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < opts.min || n > opts.max) throw new UsageError(`--${name} must be a number of seconds from ${opts.min} to ${opts.max}`, command);
  return Math.round(n * 1000);
}
