// Runs the page shows without running them: a recorded example (public/examples/, src/worker/recording.ts) or a
// stored run's history (IndexedDB, read back by the worker). Either becomes a RunState by folding its events
// through the same reducer a live run's go through, so every view reads it as it reads a live run.
import type { ExperimentFindings } from '../lab/experiment/findings.ts';
import type { SelfPlayConfig } from '../selfplay/config.ts';
import type { RunEvent } from '../selfplay/events.ts';
import { parseRecording, replayEvent, type RunRecording } from '../worker/recording.ts';
import { applyEvent, emptyState, type RunState } from './state.ts';

/** A run the page views: its name, what to call it, its settings and its view state. */
export interface ViewedRun {
  /** 'example:<name>' for a recording, the stored run's name otherwise. */
  id: string;
  title: string;
  /** Where it comes from, for the banner ("recorded example", "stored run"). */
  kind: 'example' | 'stored';
  config: Partial<SelfPlayConfig>;
  state: RunState;
}

export function stateFromEvents(events: Iterable<RunEvent>): RunState {
  const state = emptyState();
  for (const ev of events) applyEvent(state, ev);
  return state;
}

/** The view of a recording. */
export function viewRecording(rec: RunRecording): ViewedRun {
  const state = stateFromEvents(rec.events.map(replayEvent));
  applyEvent(state, {
    type: 'log',
    level: 'info',
    message: `recorded example '${rec.name}' (${rec.title}), recorded ${rec.recordedAt} from: ${rec.command}`,
  });
  return { id: `example:${rec.name}`, title: rec.title, kind: 'example', config: rec.config, state };
}

export interface ExampleEntry {
  file: string;
  name: string;
  title: string;
}

/** Where the shipped examples are served (public/examples/). */
export function examplesBase(): string {
  const base = (import.meta.env?.BASE_URL as string | undefined) ?? '/';
  return `${base.replace(/\/?$/, '/')}examples/`;
}

/** The shipped examples, and what the experiment they were recorded from found (null where the index has none). */
export interface ExamplesList {
  examples: ExampleEntry[];
  experiment: ExperimentFindings | null;
}

/** An index's findings, where they have the shape the guide reads (else none: they are shown, never required). */
function findingsOf(x: unknown): ExperimentFindings | null {
  const e = x as Partial<ExperimentFindings> | undefined;
  const text = (v: unknown) => typeof v === 'string';
  const ok =
    e &&
    text(e.source) &&
    text(e.scope) &&
    (e.summary === null || text(e.summary)) &&
    Array.isArray(e.findings) &&
    e.findings.every(
      (f) => f && ['name', 'label', 'interval', 'perSeed', 'verdict'].every((k) => text(f[k as 'name'])),
    );
  return ok ? (e as ExperimentFindings) : null;
}

/** The shipped examples (none when none are served); a broken index is an error that says so. */
export async function listExamples(fetcher: typeof fetch = fetch): Promise<ExamplesList> {
  const res = await fetcher(`${examplesBase()}index.json`);
  if (res.status === 404) return { examples: [], experiment: null };
  if (!res.ok) throw new Error(`examples/index.json: the server answered ${res.status}`);
  const j = (await res.json()) as { examples?: ExampleEntry[]; experiment?: unknown };
  if (!Array.isArray(j.examples)) throw new Error('examples/index.json has no "examples" list');
  return { examples: j.examples, experiment: findingsOf(j.experiment) };
}

/** A shipped recording, fetched and checked. */
export async function fetchExample(entry: ExampleEntry, fetcher: typeof fetch = fetch): Promise<RunRecording> {
  const what = `examples/${entry.file}`;
  const res = await fetcher(`${examplesBase()}${encodeURIComponent(entry.file)}`);
  if (!res.ok) throw new Error(`${what}: the server answered ${res.status}`);
  return parseRecording(await res.text(), what);
}
