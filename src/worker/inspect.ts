// Checks before a run, for the setup panel: the embedded models, a model's size and memory needs against the
// GPU's limits (from config.json alone), an uploaded corpus, and a small matmul that proves the device computes.
import type { Engine } from '../gpu/engine.ts';
import { GpuLimitError } from '../gpu/engine.ts';
import { matmul } from '../gpu/ops/matmul.ts';
import { JsonlParseError, parseCorpusJsonl } from '../env/corpus.ts';
import type { ModelConfig } from '../model/config.ts';
import { MissingFileError, isMissingFile } from '../model/files.ts';
import { tinyConfig } from '../model/init.ts';
import { readConfig } from '../model/io.ts';
import type { SelfPlayConfig } from '../selfplay/config.ts';
import type { BrowserCheckpoints } from './checkpoint-store.ts';
import { estimateRun, type AdapterLimits } from '../selfplay/memory-plan.ts';
import { HubError, hubIdProblem, hubPlan } from './hub.ts';
import { describeSource, embeddedBase, relativeNames, resolveSource, type ModelSource } from './model-source.ts';
import type { CorpusReport, ModelReport } from './protocol.ts';

/** Browsers' default limits, for estimates before the engine exists. */
export const DEFAULT_LIMITS: AdapterLimits = {
  maxStorageBufferBindingSize: 128 * 2 ** 20,
  maxBufferSize: 256 * 2 ** 20,
};

/** A small matmul checked on the CPU: proves the device computes, and shows its speed. */
export async function selfTest(e: Engine, n = 64): Promise<{ maxError: number; ms: number }> {
  const a = Float32Array.from({ length: n * n }, (_, k) => Math.sin(k));
  const b = Float32Array.from({ length: n * n }, (_, k) => Math.cos(k));
  const t0 = performance.now();
  const c = e.tidy(() => e.keep(matmul(e.tensor(a, [n, n]), e.tensor(b, [n, n]))));
  const got = await c.read();
  const ms = performance.now() - t0;
  c.dispose();
  let maxError = 0;
  for (let i = 0; i < n; i += 7)
    for (let j = 0; j < n; j += 5) {
      let s = 0;
      for (let k = 0; k < n; k++) s += a[i * n + k]! * b[k * n + j]!;
      maxError = Math.max(maxError, Math.abs(s - got[i * n + j]!));
    }
  return { maxError, ms };
}

/** Names of the models under public/models/ (from its index.json). */
export async function listEmbedded(): Promise<string[]> {
  try {
    const res = await fetch(`${embeddedBase()}index.json`);
    if (!res.ok) return [];
    const j = (await res.json()) as unknown;
    const list = Array.isArray(j) ? j : ((j as { models?: unknown[] }).models ?? []);
    return list.map((x) => (typeof x === 'string' ? x : String((x as { name?: string }).name ?? ''))).filter(Boolean);
  } catch {
    return [];
  }
}

/** The model's size and memory needs against this GPU's limits, from config.json alone. */
export async function inspectModel(
  src: ModelSource,
  config: SelfPlayConfig,
  store: BrowserCheckpoints,
  limits: AdapterLimits = DEFAULT_LIMITS,
): Promise<ModelReport> {
  const where = describeSource(src);
  try {
    let cfg: ModelConfig;
    const report: ModelReport = { ok: true, where };
    if (src.kind === 'random-tiny') {
      cfg = tinyConfig({
        vocabSize: config.tinyVocab,
        hidden: config.tinyHidden,
        layers: config.tinyLayers,
        heads: config.tinyHeads,
        kvHeads: config.tinyKvHeads,
        maxPositions: config.tinyMaxPositions,
      });
    } else {
      if (src.kind === 'hub') {
        const problem = hubIdProblem(src.id);
        if (problem) return { ok: false, where, error: problem, errorKind: 'bad-id' };
        // The size first, from the hub's listing (a wrong id or a missing file is refused here, by name).
        const plan = await hubPlan(src);
        report.downloadBytes = plan.toDownload;
        report.totalBytes = plan.bytes;
        report.cached = plan.toDownload === 0;
      }
      const { readFile } = resolveSource(src, store);
      cfg = await readConfig(readFile, where);
      if (src.kind === 'files') {
        const names = relativeNames(src.files);
        const missing = ['tokenizer.json', 'tokenizer_config.json'].filter((f) => !names.has(f));
        if (![...names.keys()].some((n) => n.endsWith('.safetensors'))) missing.unshift('model.safetensors');
        if (missing.length)
          return {
            ok: false,
            where,
            error:
              `${where} lacks ${missing.join(', ')} (a model folder needs config.json, *.safetensors, ` +
              'tokenizer.json and tokenizer_config.json).',
            errorKind: 'missing',
          };
      }
    }
    const memory = estimateRun(cfg, config, limits);
    report.memory = memory;
    if (!memory.fits) {
      report.ok = false;
      report.error = memory.problems[0];
      report.errorKind = 'too-large';
    }
    return report;
  } catch (e) {
    return { ok: false, where, error: (e as Error).message, errorKind: classify(e) };
  }
}

/** Checks an uploaded corpus; errors name the line. */
export async function checkCorpus(name: string, text: string): Promise<CorpusReport> {
  try {
    const passages = parseCorpusJsonl(text, name);
    if (passages.length === 0) return { ok: false, error: `${name}: the file holds no passages` };
    return { ok: true, passages: passages.length, sample: passages.slice(0, 3).map((p) => p.title) };
  } catch (e) {
    return { ok: false, error: (e as Error).message, ...(e instanceof JsonlParseError ? { line: e.line } : {}) };
  }
}

function classify(e: unknown): string {
  if (e instanceof HubError) return e.kind;
  const msg = (e as Error).message ?? '';
  const badId =
    /not a Hugging Face model id|model id may be misspelt|Give the model id|was not found \(no config\.json\)/;
  if (badId.test(msg) || /gated or private/.test(msg)) return 'bad-id';
  if (e instanceof HubError || /check the network connection|could not reach Hugging Face/.test(msg)) return 'network';
  if (e instanceof MissingFileError || isMissingFile(e)) return 'missing';
  if (e instanceof GpuLimitError) return 'too-large';
  return 'unsupported';
}
