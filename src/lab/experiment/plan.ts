// The plan of `npm run experiment` (pure): which arms, which seeds, and the settings of each run.
// Arms (ALGORITHM.md sections 6-7): the base model (evaluation only), Dr. Zero (no teacher, λ = 0) and
// π-Play with each privileged context of the ablation. Every run of one experiment shares the preset and
// the settings given on the command line; an arm sets only `privileged` (and λ = 0 for Dr. Zero), a seed
// only `seed`.
import type { PrivilegedMode } from '../../env/prompts.ts';
import { parseNumber } from '../../settings/schema.ts';
import {
  ConfigError,
  makeConfig,
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
  piplay: { label: 'π-Play (full QCP)', privileged: 'full' },
  partial: { label: 'π-Play, partial QCP', privileged: 'partial' },
  gt: { label: 'π-Play, GT answer only', privileged: 'gt' },
  'gt-hop': { label: 'π-Play, GT + hop count', privileged: 'gt-hop' },
} as const satisfies Record<string, ArmSpec>;

export type ArmName = keyof typeof ARMS;
export const ARM_NAMES = Object.keys(ARMS) as ArmName[];
export const DEFAULT_ARMS: ArmName[] = ['base', 'drzero', 'piplay', 'partial', 'gt'];
export const DEFAULT_SEEDS = [1, 2, 3];

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
  const jobs: ExperimentJob[] = [];
  for (const seed of o.seeds) {
    for (const arm of o.arms) {
      const spec: ArmSpec = ARMS[arm];
      const overrides: Partial<SelfPlayConfig> = { ...o.settings, seed };
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
