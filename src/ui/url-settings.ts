// A setup in the page's address, so a link reproduces it: the preset and every setting that differs from it,
// each under its command-line flag (?preset=smoke&iterations=2&lambda=0.1,0.03). Settings the page picks with
// its own controls (model, corpus, eval set) are not carried.
import {
  SETTINGS,
  PRESETS,
  parseOptionValue,
  type PresetName,
  type SelfPlayConfig,
  type Setting,
  valueText as text,
} from '../selfplay/config.ts';

type Key = keyof SelfPlayConfig;

/** Every setting but those the page's own pickers set (group 'source'). */
const CARRIED = (Object.keys(SETTINGS) as Key[]).filter((k) => (SETTINGS[k] as Setting).group !== 'source');

/** The query of a setup: its preset and the settings that differ from the preset's. */
export function settingsToQuery(preset: PresetName, config: SelfPlayConfig): string {
  const q = new URLSearchParams({ preset });
  const base = PRESETS[preset];
  for (const k of CARRIED) {
    const t = text(config[k]);
    if (t !== text(base[k])) q.set(SETTINGS[k].flag, t);
  }
  return q.toString().replace(/%2C/g, ',');
}

export interface QuerySettings {
  preset?: PresetName;
  /** Form texts per setting (already checked against the setting's kind). */
  values: Partial<Record<Key, string>>;
  /** What could not be used, one line each, naming the parameter. */
  problems: string[];
}

/** The setup a query names; unknown or bad parameters are reported, never applied. */
export function settingsFromQuery(search: string): QuerySettings {
  const q = new URLSearchParams(search);
  const out: QuerySettings = { values: {}, problems: [] };
  const byFlag = new Map(CARRIED.map((k) => [SETTINGS[k].flag, k]));
  for (const [name, value] of q) {
    if (name === 'preset') {
      if (value in PRESETS) out.preset = value as PresetName;
      else out.problems.push(`preset=${value}: not a preset (${Object.keys(PRESETS).join(', ')})`);
      continue;
    }
    const key = byFlag.get(name);
    if (!key) {
      out.problems.push(`${name}: not a setting the page takes from its address`);
      continue;
    }
    try {
      out.values[key] = text(parseOptionValue(key, value.trim()));
    } catch (e) {
      out.problems.push(`${name}=${value}: ${(e as Error).message.replace(/^--[\w-]+: /, '')}`);
    }
  }
  return out;
}
