// The data the page and the engine worker exchange (besides the WorkerApi's method calls).
import type { PretrainSettings } from '../pretrain/settings.ts';
import type { PretrainSummary } from '../pretrain/summary.ts';
import type { SelfPlayConfig } from '../selfplay/config.ts';
import type { CheckpointMeta } from './checkpoint-store.ts';
import type { MemoryReport } from '../selfplay/memory-plan.ts';
import type { DownloadProgress } from './hub.ts';
import type { ModelSource } from './model-source.ts';
import type { WireEvent } from './wire.ts';

export type { ModelSource, MemoryReport, DownloadProgress, CheckpointMeta, PretrainSettings, PretrainSummary };

export type CorpusSource = { kind: 'world' } | { kind: 'jsonl'; name: string; text: string };

export interface CorpusReport {
  ok: boolean;
  passages?: number;
  /** A few titles, to show the corpus was read as meant. */
  sample?: string[];
  /** "<file>:<line>: <problem>" for a bad file. */
  error?: string;
  line?: number;
}

export interface ModelReport {
  ok: boolean;
  where: string;
  memory?: MemoryReport;
  /** Bytes still to download (hub), of `totalBytes` in all, and whether everything is cached already. */
  downloadBytes?: number;
  totalBytes?: number;
  cached?: boolean;
  /** Why the model cannot be used (bad id, missing files, unsupported architecture, too large...). */
  error?: string;
  /** 'bad-id' | 'missing' | 'unsupported' | 'too-large' | 'network' */
  errorKind?: string;
}

export type RunPhase = 'idle' | 'starting' | 'running' | 'paused' | 'stopping' | 'stopped' | 'finished' | 'failed';

/** A new run, or the continuation of a stored one (with the settings, weights and counters saved in it). */
export type StartRequest =
  | { config: SelfPlayConfig; model: ModelSource; corpus: CorpusSource; resumeFrom?: undefined }
  | { resumeFrom: string };

/** The worker runs one job at a time: a self-play run or a pretraining. */
export type JobKind = 'selfplay' | 'pretrain';

/** A pretraining run: a fresh tiny model, or more training of an embedded or stored model. */
export interface PretrainRequest extends PretrainSettings {
  /** Continue this model (its weights and tokenizer; hidden, layers and vocab then come from its config). */
  from?: { kind: 'embedded'; name: string } | { kind: 'checkpoint'; name: string };
  /** The stored model's name (default pretrained-<date>); an existing name is refused, never replaced. */
  name?: string;
}

export type WorkerMessage =
  | { type: 'run'; event: WireEvent }
  | {
      type: 'phase';
      phase: RunPhase;
      job: JobKind;
      error?: string;
      errorKind?: 'device-lost' | 'out-of-memory' | 'config' | 'other';
    }
  | { type: 'download'; progress: DownloadProgress }
  | { type: 'device-lost'; message: string; lastCheckpoint: string | null; job: JobKind }
  /** A pretraining finished; `saved` is the stored model's name, or null when storing it failed. */
  | { type: 'pretrained'; summary: PretrainSummary; saved: string | null }
  | { type: 'checkpoints'; list: CheckpointMeta[] }
  | { type: 'notice'; level: 'info' | 'warn' | 'error'; message: string };
