// Command-line options of `npm run train` and `npm run eval`: the run's own flags plus one flag per
// setting of src/selfplay/config.ts (`--topk 50`, `--tail off`, ...). Errors name the option and what it
// accepts.
import { ConfigError, keyOfFlag, parseOptionValue, type SelfPlayConfig } from '../selfplay/config.ts';

export interface ParsedArgs {
  /** The command's own options (--out, --preset, ...), as strings; switches map to 'true'. */
  own: Record<string, string>;
  /** Settings given on the command line. */
  settings: Partial<SelfPlayConfig>;
}

/**
 * Parses `--flag value`, `--flag=value` and switches. `own` lists the command's own value options,
 * `switches` its options without a value.
 */
export function parseArgs(argv: readonly string[], own: readonly string[], switches: readonly string[] = []): ParsedArgs {
  const out: ParsedArgs = { own: {}, settings: {} };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument '${arg}' (options look like --name value)`);
    const eq = arg.indexOf('=');
    const flag = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    if (switches.includes(flag)) {
      if (eq >= 0) throw new ConfigError(`--${flag} takes no value`);
      out.own[flag] = 'true';
      continue;
    }
    let value: string;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('--') && isNaN(Number(next)))) throw new ConfigError(`--${flag} needs a value`);
      value = next;
      i++;
    }
    if (own.includes(flag)) {
      out.own[flag] = value;
      continue;
    }
    const key = keyOfFlag(flag);
    if (!key) throw new ConfigError(`unknown option --${flag} (see --help)`);
    (out.settings as Record<string, unknown>)[key] = parseOptionValue(key, value);
  }
  return out;
}
