// The plan of `npm run experiment` (pure): which arms, which seeds, and the settings of each run.
// Arms (ALGORITHM.md sections 6-7): the base model (evaluation only), Dr. Zero (no teacher, λ = 0), the self
// control (the same teacher without privileged information) and π-Play with each privileged context of the
// ablation. Every run of one experiment shares the preset and the settings given on the command line; an arm sets
// `privileged` (and λ = 0 for Dr. Zero) and the settings its own dev-world search chose (--arm-settings), a seed
// only `seed`.
import type { PrivilegedMode } from '../../env/prompts.ts';
import { parseNumber } from '../../settings/schema.ts';
import {
  ConfigError,
  keyOfFlag,
  makeConfig,
  parseOptionValue,
  SETTINGS,
  PRESETS,
  type PresetName,
  type SelfPlayConfig,
  upgradeConfig,
} from '../../selfplay/config.ts';

export interface ArmSpec {
  /** How the arm appears in tables and plots. */
  label: string;
  /** null: the base model, evaluated only (no training). */
  privileged: PrivilegedMode | null;
}

export const ARMS = {
  base: { label: 'base model (no training)', privileged: null },
  drzero: { label: 'Dr. Zero (no teacher)', privileged: 'none' },
  self: { label: 'self control (teacher without privileged information)', privileged: 'self' },
  piplay: { label: 'π-Play (full QCP)', privileged: 'full' },
  partial: { label: 'π-Play, partial QCP', privileged: 'partial' },
  gt: { label: 'π-Play, GT answer only', privileged: 'gt' },
  'gt-hop': { label: 'π-Play, GT + hop count', privileged: 'gt-hop' },
} as const satisfies Record<string, ArmSpec>;

export type ArmName = keyof typeof ARMS;
export const ARM_NAMES = Object.keys(ARMS) as ArmName[];
export const DEFAULT_ARMS: ArmName[] = ['base', 'drzero', 'self', 'piplay', 'gt'];
export const DEFAULT_SEEDS = [1, 2, 3, 4, 5];

/** Settings of single arms (an arm's own dev-world choice), on top of the preset and the command line's. */
export type ArmSettings = Partial<Record<ArmName, Partial<SelfPlayConfig>>>;

/**
 * `--arm-settings FILE`'s JSON: `{ "<arm>": { "<flag>": value, ... }, ... }`, each value read as the flag's
 * command-line text (`"lr": "1e-4"`, `"lambda": "0.1,0.03,0.03"`; numbers are accepted as numbers). Errors name
 * the file, the arm and the flag.
 */
export function parseArmSettings(json: unknown, source: string): ArmSettings {
  const where = `--arm-settings ${source}`;
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw new ConfigError(`${where}: expected a JSON object of arms, e.g. {"piplay": {"lr": "1e-4"}}`);
  const out: ArmSettings = {};
  for (const [arm, flags] of Object.entries(json)) {
    if (!isArm(arm)) throw new ConfigError(`${where}: '${arm}' is not an arm; use some of ${ARM_NAMES.join(', ')}`);
    if (ARMS[arm].privileged === null)
      throw new ConfigError(`${where}: the base arm is not trained; it has no settings`);
    if (flags === null || typeof flags !== 'object' || Array.isArray(flags))
      throw new ConfigError(`${where}: the settings of '${arm}' must be an object of flags, e.g. {"lr": "1e-4"}`);
    const settings: Record<string, unknown> = {};
    for (const [flag, value] of Object.entries(flags)) {
      const key = keyOfFlag(flag);
      if (key === null) throw new ConfigError(`${where}: '${arm}' sets '${flag}', which is not a setting's flag`);
      if (key === 'seed' || key === 'privileged')
        throw new ConfigError(`${where}: '${arm}' sets --${flag}, which the experiment sets for each run`);
      if (typeof value !== 'string' && typeof value !== 'number')
        throw new ConfigError(`${where}: '${arm}' --${flag} must be a string or a number, as on the command line`);
      settings[key] = parseOptionValue(key, String(value));
    }
    out[arm] = settings as Partial<SelfPlayConfig>;
  }
  return out;
}

export function isArm(name: string): name is ArmName {
  return Object.hasOwn(ARMS, name);
}

export function armLabel(name: string): string {
  return isArm(name) ? ARMS[name].label : name;
}

/** `--arms base,drzero,piplay`: known names, no repeats, at least one. */
export function parseArms(text: string): ArmName[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (names.length === 0) throw new ConfigError(`--arms: '${text}' names no arm; use some of ${ARM_NAMES.join(', ')}`);
  for (const n of names)
    if (!isArm(n)) throw new ConfigError(`--arms: '${n}' is not an arm; use some of ${ARM_NAMES.join(', ')}`);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new ConfigError(`--arms: '${dup}' is given twice`);
  return names as ArmName[];
}

/** `--seeds 1,2,3`: distinct seeds (decimal integers from 0 to 2^32 - 1), at least one and at most 1000. */
export function parseSeeds(text: string): number[] {
  const parts = text.split(',').map((s) => s.trim());
  const seeds = parts.map((s) => parseNumber(s));
  if (seeds.length > 1000 || seeds.some((s) => !Number.isInteger(s) || s < 0 || s > 2 ** 32 - 1)) {
    throw new ConfigError(
      `--seeds: '${text}' is not allowed; use a comma-separated list of at most 1000 integers from 0 to ` +
        `${2 ** 32 - 1}, e.g. 1,2,3`,
    );
  }
  const dup = seeds.find((s, i) => seeds.indexOf(s) !== i);
  if (dup !== undefined) throw new ConfigError(`--seeds: ${dup} is given twice`);
  return seeds;
}

export interface ExperimentJob {
  arm: ArmName;
  seed: number;
  /** The run folder, relative to the experiment's folder: runs/<arm>-seed<k>. */
  dir: string;
  /** false: the base arm (evaluate the base model once). */
  train: boolean;
  config: SelfPlayConfig;
}

export interface PlanOptions {
  preset: PresetName;
  arms: readonly ArmName[];
  seeds: readonly number[];
  /** Settings from the command line; they apply to every run. */
  settings: Partial<SelfPlayConfig>;
  /** Settings of single arms (none given twice: on the command line and for an arm). */
  armSettings?: ArmSettings;
}

export function runDir(arm: string, seed: number): string {
  return `runs/${arm}-seed${seed}`;
}

/**
 * Every run of the experiment, seed by seed (all arms of seed 1, then of seed 2, ...), so a stopped
 * experiment has whole comparisons first. When the base arm is in the plan it is the "before training"
 * point of every arm (same weights, greedy evaluation), so the trained arms skip their own first
 * evaluation unless --eval-at-start is given.
 */
export function planExperiment(o: PlanOptions): ExperimentJob[] {
  if (!(o.preset in PRESETS))
    throw new ConfigError(
      `--preset: '${String(o.preset)}' is not allowed; use one of ${Object.keys(PRESETS).join(', ')}`,
    );
  if (o.settings.seed !== undefined)
    throw new ConfigError("--seed: the experiment sets each run's seed; use --seeds 1,2,3");
  if (o.settings.privileged !== undefined)
    throw new ConfigError('--privileged: each arm sets its own privileged context; choose arms with --arms');
  if (o.arms.length === 0) throw new ConfigError('--arms: no arm given');
  if (o.seeds.length === 0) throw new ConfigError('--seeds: no seed given');
  const skipStartEval = o.arms.includes('base') && o.settings.evalAtStart === undefined;
  for (const [arm, own] of Object.entries(o.armSettings ?? {})) {
    const twice = Object.keys(own).find((k) => k in o.settings);
    if (twice)
      throw new ConfigError(
        `--${SETTINGS[twice as keyof SelfPlayConfig].flag} is given on the command line and in --arm-settings for ` +
          `'${arm}'; give it in one place`,
      );
    if (ARMS[arm as ArmName].privileged === 'none' && own.lambda !== undefined)
      throw new ConfigError(`--arm-settings: '${arm}' has no teacher, so it takes no --lambda (it is 0)`);
  }
  const jobs: ExperimentJob[] = [];
  for (const seed of o.seeds) {
    for (const arm of o.arms) {
      const spec: ArmSpec = ARMS[arm];
      const overrides: Partial<SelfPlayConfig> = { ...o.settings, ...o.armSettings?.[arm], seed };
      if (spec.privileged !== null) {
        overrides.privileged = spec.privileged;
        if (spec.privileged === 'none') overrides.lambda = 0;
        if (skipStartEval) overrides.evalAtStart = false;
      }
      jobs.push({
        arm,
        seed,
        dir: runDir(arm, seed),
        train: spec.privileged !== null,
        config: makeConfig(o.preset, overrides),
      });
    }
  }
  return jobs;
}

/** The settings (as --flags) in which two configurations differ. */
export function configDiff(a: SelfPlayConfig, b: SelfPlayConfig): string[] {
  const [x, y] = [upgradeConfig(a), upgradeConfig(b)];
  return (Object.keys(SETTINGS) as (keyof SelfPlayConfig)[])
    .filter((k) => JSON.stringify(x[k]) !== JSON.stringify(y[k]))
    .map((k) => `--${SETTINGS[k].flag}`);
}
