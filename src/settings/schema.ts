// What a setting is, for every settings table of the project (self-play's SETTINGS in src/selfplay/config.ts,
// pretraining's PRETRAIN_FIELDS in src/pretrain/settings.ts): its flag, the kind of values it takes with their
// bounds, its help, the papers' value and the demo value, and how the page shows it. The checks, the words that
// describe a kind, the text of a value and the error of a bad one are written here once for both.
import type { LambdaSchedule } from '../rl/schedule.ts';

export type Kind =
  | { t: 'int'; min: number; max: number }
  | { t: 'number'; min: number; max?: number; above?: boolean; below?: number }
  | { t: 'bool' }
  | { t: 'enum'; values: readonly string[] }
  | { t: 'string'; empty?: boolean }
  | { t: 'ints'; min: number; max: number; length: number }
  | { t: 'numbers'; min: number; length: number }
  | { t: 'lambda' };

/** A kind that carries the TypeScript type of its values (for the derived config type only). */
export type KindOf<T> = Kind & { readonly value?: T };

/** The largest integer a setting takes unless it names its own bound (Int32-safe: ids and counts live in Int32Arrays). */
export const INT_MAX = 2 ** 31 - 1;
export const int = (min: number, max = INT_MAX): KindOf<number> => ({ t: 'int', min, max });
export const num = (min: number, max?: number, above = false, below?: number): KindOf<number> => ({
  t: 'number',
  min,
  ...(max !== undefined ? { max } : {}),
  above,
  ...(below !== undefined ? { below } : {}),
});
export const bool = (): KindOf<boolean> => ({ t: 'bool' });
export const oneOf = <const V extends string>(values: readonly V[]): KindOf<V> => ({ t: 'enum', values });
export const text = (empty = false): KindOf<string> => ({ t: 'string', ...(empty ? { empty } : {}) });
/** The most entries a list setting takes unless it names its own bound (a λ per iteration of the longest run). */
export const LIST_MAX = 10_000;
export const ints = (min: number, max = INT_MAX, length = LIST_MAX): KindOf<number[]> => ({
  t: 'ints',
  min,
  max,
  length,
});
export const nums = (min: number, length = LIST_MAX): KindOf<number[]> => ({ t: 'numbers', min, length });
export const lambdas = (): KindOf<LambdaSchedule> => ({ t: 'lambda' });

/**
 * Where the page shows a setting: the main block, the random tiny model's shape, the world and evaluation
 * block, set by the page's own pickers (source), or (absent) under "advanced settings".
 */
export type PageGroup = 'main' | 'tiny' | 'corpus' | 'source';

/** A value the page offers beside a field with one click (e.g. the paper's λ schedules). */
export interface Suggestion {
  label: string;
  value: string;
  note: string;
}

/**
 * One setting: its flag, kind and help, the papers' value and the demo value where it differs, and how the page
 * shows it (its label, where the flag's words are not enough; its group; suggested values; a note per choice).
 */
export interface Setting<T = unknown> {
  flag: string;
  kind: Kind;
  help: string;
  paper: T;
  demo?: T;
  label?: string;
  group?: PageGroup;
  suggestions?: readonly Suggestion[];
  /** For a choice of values: what each means, after it in the page's list. */
  notes?: Readonly<Record<string, string>>;
}

export function setting<T>(
  s: Omit<Setting<T>, 'kind' | 'paper' | 'demo'> & { kind: KindOf<T>; paper: NoInfer<T>; demo?: NoInfer<T> },
): Setting<T> {
  return s;
}

/** What a kind accepts, in words (for messages and --help). */
export function describeKind(k: Kind): string {
  switch (k.t) {
    case 'int':
      return k.max === INT_MAX ? `an integer >= ${k.min}` : `an integer from ${k.min} to ${k.max}`;
    case 'number':
      return (
        `a number ${k.above ? '>' : '>='} ${k.min}${k.max !== undefined ? ` and <= ${k.max}` : ''}` +
        (k.below !== undefined ? ` and < ${k.below}` : '')
      );
    case 'bool':
      return 'on or off';
    case 'enum':
      return `one of ${k.values.join(', ')}`;
    case 'string':
      return k.empty ? 'a string' : 'a non-empty string';
    case 'ints':
      return `a comma-separated list of at most ${k.length} integers ${k.max === INT_MAX ? `>= ${k.min}` : `from ${k.min} to ${k.max}`}`;
    case 'numbers':
      return `a comma-separated list of at most ${k.length} numbers >= ${k.min}`;
    case 'lambda':
      return `a number >= 0 or a comma-separated list of at most ${LIST_MAX} of them (one per iteration)`;
  }
}

const isList = (v: unknown, length: number): v is unknown[] => Array.isArray(v) && v.length > 0 && v.length <= length;

/** Whether `v` is a value of kind `k` (its type and bounds). */
export function kindAccepts(k: Kind, v: unknown): boolean {
  const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
  switch (k.t) {
    case 'int':
      return isNum(v) && Number.isInteger(v) && v >= k.min && v <= k.max;
    case 'number':
      return (
        isNum(v) &&
        (k.above ? v > k.min : v >= k.min) &&
        (k.max === undefined || v <= k.max) &&
        (k.below === undefined || v < k.below)
      );
    case 'bool':
      return typeof v === 'boolean';
    case 'enum':
      return typeof v === 'string' && k.values.includes(v);
    case 'string':
      return typeof v === 'string' && (k.empty || v.trim() !== '');
    case 'ints':
      return isList(v, k.length) && v.every((x) => isNum(x) && Number.isInteger(x) && x >= k.min && x <= k.max);
    case 'numbers':
      return isList(v, k.length) && v.every((x) => isNum(x) && x >= k.min);
    case 'lambda':
      return isNum(v) ? v >= 0 : isList(v, LIST_MAX) && v.every((x) => isNum(x) && x >= 0);
  }
}

/** A decimal number as people write one (`12`, `-0.5`, `.5`, `3e-4`); `Number()` would also take `0x10`, `0b1`,
 *  `Infinity` and whitespace around it. */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The number a setting's text writes, or NaN when it is not a plain decimal number. Every command line, form and
 *  address reads numbers through this one function. */
export function parseNumber(text: string): number {
  return DECIMAL.test(text) ? Number(text) : NaN;
}

/** A setting's value as text, as a form field or the page's address holds it: lists comma-joined, switches on/off. */
export function valueText(v: unknown): string {
  return Array.isArray(v) ? v.join(',') : typeof v === 'boolean' ? (v ? 'on' : 'off') : String(v);
}

/** A setting's value as its flag takes it on a command line: valueText, the empty string as ''. */
export function flagValue(v: unknown): string {
  return v === '' ? "''" : valueText(v);
}

/**
 * A bad setting or option; the message names it (as its --flag) and what it accepts. `key` is the setting's name
 * in its table (self-play's SETTINGS, pretraining's PRETRAIN_FIELDS) when the error is about one (the page shows the message under that field).
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(
    message: string,
    readonly key?: string,
  ) {
    super(message);
  }
}
