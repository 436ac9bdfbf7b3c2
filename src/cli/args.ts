// The one command-line parser of the project's commands: scanArgs reads `--flag value`, `--flag=value` and
// switches against a command's own options and the flags of a settings table; parseArgs is it with the
// self-play settings of src/selfplay/config.ts (`--topk 50`, `--tail off`, ...), for train, eval, probe and
// experiment; src/cli/pretrain-args.ts uses it with the pretraining table. Errors name the option and what
// it accepts.
import { ConfigError, keyOfFlag, parseOptionValue, type SelfPlayConfig } from '../selfplay/config.ts';
import { describeKind, int, kindAccepts, parseNumber } from '../settings/schema.ts';

export interface ParsedArgs {
  /** The command's own options (--out, --preset, ...), as strings; switches map to 'true'. */
  own: Record<string, string>;
  /** Settings given on the command line. */
  settings: Partial<SelfPlayConfig>;
}

export interface ScannedArgs {
  /** The command's own options, as strings; switches map to 'true'. */
  own: Record<string, string>;
  /** Settings flags with their values, in the order given. */
  given: [flag: string, value: string][];
}

/**
 * Reads `--flag value`, `--flag=value` and switches. `own` lists the command's own value options,
 * `switches` its options without a value, `isSetting` says whether a flag names a setting. A flag given twice is
 * refused (which of the two was meant is not for the parser to guess).
 */
export function scanArgs(
  argv: readonly string[],
  own: readonly string[],
  switches: readonly string[],
  isSetting: (flag: string) => boolean,
): ScannedArgs {
  const out: ScannedArgs = { own: {}, given: [] };
  const seen = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument '${arg}' (options look like --name value)`);
    const eq = arg.indexOf('=');
    const flag = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    if (seen.has(flag)) throw new ConfigError(`--${flag} is given twice; give it once`);
    seen.add(flag);
    if (switches.includes(flag)) {
      if (eq >= 0) throw new ConfigError(`--${flag} takes no value`);
      out.own[flag] = 'true';
      continue;
    }
    let value: string;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('--') && Number.isNaN(parseNumber(next))))
        throw new ConfigError(`--${flag} needs a value`);
      value = next;
      i++;
    }
    if (own.includes(flag)) out.own[flag] = value;
    else if (isSetting(flag)) out.given.push([flag, value]);
    else throw new ConfigError(`unknown option --${flag} (see --help)`);
  }
  return out;
}

/** scanArgs with the self-play settings: each value parsed and checked for its setting. */
export function parseArgs(
  argv: readonly string[],
  own: readonly string[],
  switches: readonly string[] = [],
): ParsedArgs {
  const scanned = scanArgs(argv, own, switches, (flag) => keyOfFlag(flag) !== null);
  const settings: Record<string, unknown> = {};
  for (const [flag, value] of scanned.given) {
    const key = keyOfFlag(flag)!;
    settings[key] = parseOptionValue(key, value);
  }
  return { own: scanned.own, settings: settings as Partial<SelfPlayConfig> };
}

/**
 * A command's own option that takes a whole number from 0 to `max`: its value, or `fallback` when it is not given.
 * Every count a command takes has a bound, as every setting has: a count past what a run can hold is refused here,
 * not found out by the memory it takes.
 */
export function countOption(own: Record<string, string>, flag: string, fallback: number, max: number): number {
  const text = own[flag];
  if (text === undefined) return fallback;
  const kind = int(0, max);
  const n = parseNumber(text.trim());
  if (!kindAccepts(kind, n)) throw new ConfigError(`--${flag}: '${text}' is not allowed; use ${describeKind(kind)}`);
  return n;
}

/** The most questions a probe, a drift check or a listing asks for: a count past it is a typo, not a run. */
export const MAX_QUESTIONS = 100_000;
/** The largest seed a command takes (the settings' seeds are 32-bit). */
export const MAX_SEED = 2 ** 32 - 1;

/** The folder of `--run DIR` or `--model FOLDER` (eval, probe): exactly one of them must be given. */
export function runOrModel(own: Record<string, string>): { runDir?: string; modelDir?: string } {
  const { run: runDir, model: modelDir } = own;
  if (Boolean(runDir) === Boolean(modelDir)) throw new ConfigError('give exactly one of --run DIR and --model FOLDER');
  return { runDir, modelDir };
}
