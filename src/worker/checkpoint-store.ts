// Checkpoints in the browser's IndexedDB (through idb-keyval).
//
// Two kinds of entries, listed in one manifest (a single key):
//  - a run: the self-play loop's RunStorage files (src/selfplay/checkpoint.ts writes two slots in turn and
//    then a pointer naming the complete one) plus the base model's config/tokenizer/corpus this worker adds;
//  - a model folder (HF config + safetensors + tokenizer), imported or pretrained in the page.
// A run also keeps its history, what the page showed of it (step metrics, evaluations, questions, token-level
// rollouts, packed as on the wire): each checkpoint adds the records since the previous one as one chunk, in the
// transaction that makes the checkpoint visible, so the history a reload shows is exactly the checkpoint's.
// Writes are atomic: a run's checkpoint data goes to the slot the pointer does not name, then ONE IndexedDB
// transaction writes the pointer and the manifest entry together; an import writes its files under a fresh
// id, then flips the manifest. A crash or a full quota mid-save leaves the previous checkpoint as it was,
// and the error says so. The key-value backend is an interface; Node tests run idbBackend itself on
// fake-indexeddb under injected failures (test/unit/worker/checkpoint-store-idb.test.ts).
import { createStore, del, get, keys, promisifyRequest, set, update, type UseStore } from 'idb-keyval';
import type { HostWeights } from '../model/host-weights.ts';
import { mergeLoraHost } from '../model/lora.ts';
import { parseSafetensors, toFloat32, writeSafetensors } from '../model/safetensors.ts';
import { joinShardFile } from '../model/vocab.ts';
import type { RunState } from '../selfplay/checkpoint.ts';
import type { SelfPlayConfig } from '../selfplay/config.ts';
import { modelCard } from '../selfplay/model-card.ts';
import type { RunEvent } from '../selfplay/events.ts';
import type { RunStorage } from '../selfplay/storage.ts';
import { RECORDED_KINDS } from './recording.ts';
import { packEvent, type WireEvent } from './wire.ts';

export interface CheckpointMeta {
  /** The run id or the imported model's name (unique). */
  name: string;
  kind: 'run' | 'model';
  createdAt: number;
  updatedAt: number;
  /** Bytes of the latest complete checkpoint (or of the model folder). */
  bytes: number;
  /** Where the run will continue (null before its first checkpoint). */
  cursor: { iteration: number; stage: string; step: number } | null;
  /** Metrics at save time (held-out EM, rewards, ...), shown in the list. */
  metrics: Record<string, number>;
  /** The base model the run started from. */
  base: string;
  /** The run's settings (resume uses them). */
  config?: SelfPlayConfig;
  /** How a model entry came to be (absent on entries stored before pretraining existed: imported). */
  origin?: 'imported' | 'pretrained';
  /** Files of a model entry, and the id its data is stored under. */
  files?: string[];
  dataId?: string;
  note?: string;
}

/** The few idb-keyval operations the store uses. */
export interface KvBackend {
  get<T>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown): Promise<void>;
  del(key: string): Promise<void>;
  /** Read-modify-write of `key` in one transaction. */
  update<T>(key: string, fn: (old: T | undefined) => T): Promise<void>;
  /** Sets `key` (and each of `more`) and read-modify-writes `other` in ONE transaction (all or none). */
  setAndUpdate<T>(
    key: string,
    value: unknown,
    other: string,
    fn: (old: T | undefined) => T,
    more?: readonly [string, unknown][],
  ): Promise<void>;
  keys(): Promise<string[]>;
  /** Usage and quota, where the platform tells (navigator.storage.estimate). */
  estimate?(): Promise<{ usage: number; quota: number } | null>;
}

/** A save failed; the previous checkpoint is untouched. */
export class CheckpointSaveError extends Error {
  override name = 'CheckpointSaveError';
  constructor(
    message: string,
    readonly quota: boolean,
  ) {
    super(message);
  }
}

interface Manifest {
  version: 1;
  entries: CheckpointMeta[];
}

const MANIFEST = 'manifest';
/** The loop's pointer file (src/selfplay/checkpoint.ts), written last. */
export const POINTER_FILE = 'checkpoints/latest.json';
const runKey = (run: string, file: string) => `run:${run}/${file}`;
/** A run's history chunks: `history/<records so far, zero-padded>`, so the keys sort in the order written. */
const HISTORY = 'history/';
const modelKey = (id: string, file: string) => `model:${id}/${file}`;

export function isQuotaError(e: unknown): boolean {
  const name = (e as { name?: string } | null)?.name ?? '';
  const msg = String((e as { message?: string } | null)?.message ?? '');
  return name === 'QuotaExceededError' || name === 'NS_ERROR_DOM_QUOTA_REACHED' || /quota/i.test(msg);
}

/**
 * What went wrong, for a message. idb-keyval rejects with the transaction's error, which is null when the
 * browser aborted the transaction without one, and an AbortError when the tab closing or site data being
 * cleared aborted it.
 */
function failureText(e: unknown): string {
  if (e === null || e === undefined) return 'the browser aborted the IndexedDB transaction';
  const { name, message } = e as { name?: unknown; message?: unknown };
  if (typeof message === 'string' && message !== '') return message;
  if (name === 'AbortError') return 'the IndexedDB transaction was aborted (AbortError)';
  return typeof name === 'string' && name !== '' ? name : String(e);
}

const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;

function newId(): string {
  const c = globalThis.crypto;
  if (c?.randomUUID) return c.randomUUID();
  return Date.now().toString(36) + Math.random().toString(36).slice(2);
}

/** A typed array that owns exactly its bytes (IndexedDB would otherwise store a view's whole buffer). */
function own(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
}

/** The metrics a list shows for a run state: the last evaluation and the last step of each stage. */
export function summarize(state: Pick<RunState, 'evals' | 'metrics'>): Record<string, number> {
  const out: Record<string, number> = {};
  const ev = state.evals[state.evals.length - 1];
  if (ev) {
    out.em = ev.em;
    for (const [h, v] of Object.entries(ev.emByHop)) out[`em_hop${h}`] = v;
  }
  for (const stage of ['student', 'examiner'] as const) {
    for (let i = state.metrics.length - 1; i >= 0; i--) {
      const m = state.metrics[i]!;
      if (m.stage !== stage) continue;
      for (const [k, v] of Object.entries(m)) {
        if (typeof v === 'number' && k !== 'iteration' && k !== 'step' && /reward|distill|solvable_share/.test(k))
          out[`${stage}_${k}`] = v;
      }
      break;
    }
  }
  return out;
}

export interface CheckpointStoreOptions {
  /**
   * The base weights of stored run `name`, rebuilt from where the run got them (the worker passes one that
   * loads the model). Needed to export a LoRA run, whose checkpoints hold only adapters.
   */
  runBase?: (name: string) => Promise<HostWeights>;
}

export class BrowserCheckpoints {
  private swept: Promise<void> | null = null;

  constructor(
    private kv: KvBackend,
    private readonly opts: CheckpointStoreOptions = {},
  ) {}

  private async manifest(): Promise<Manifest> {
    return (await this.kv.get<Manifest>(MANIFEST)) ?? { version: 1, entries: [] };
  }

  async list(): Promise<CheckpointMeta[]> {
    await this.sweep();
    return (await this.manifest()).entries.slice().sort((a, b) => b.updatedAt - a.updatedAt);
  }

  async entry(name: string): Promise<CheckpointMeta | undefined> {
    return (await this.manifest()).entries.find((e) => e.name === name);
  }

  /** Registers a new run (listed once it has a checkpoint) and returns its storage. */
  async createRun(meta: {
    name?: string;
    base: string;
    config: SelfPlayConfig;
    note?: string;
  }): Promise<BrowserRunStorage> {
    const name = meta.name ?? `run-${new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-')}`;
    const now = Date.now();
    await this.kv.update<Manifest>(MANIFEST, (m) =>
      editManifest(m, name, () => ({
        name,
        kind: 'run',
        createdAt: now,
        updatedAt: now,
        bytes: 0,
        cursor: null,
        metrics: {},
        base: meta.base,
        config: meta.config,
        note: meta.note,
      })),
    );
    return new BrowserRunStorage(this.kv, name);
  }

  /** The storage of an existing run (to resume it). */
  runStorage(name: string): BrowserRunStorage {
    return new BrowserRunStorage(this.kv, name);
  }

  /**
   * What the page showed of run `name`, in order: its history chunks, cut to `records` (a checkpoint's counts
   * per kind) when given. [] for a run stored before runs kept a history.
   */
  async history(name: string, records?: Partial<Record<HistoryKind, number>>): Promise<WireEvent[]> {
    const e = await this.entry(name);
    if (e?.kind !== 'run') throw new Error(`no stored run named '${name}'`);
    const prefix = runKey(name, HISTORY);
    const chunks = (await this.kv.keys()).filter((k) => k.startsWith(prefix)).sort();
    const out: WireEvent[] = [];
    const seen: Partial<Record<HistoryKind, number>> = {};
    for (const k of chunks) {
      for (const ev of (await this.kv.get<WireEvent[]>(k)) ?? []) {
        const kind = historyKind(ev.type);
        if (!kind) continue;
        seen[kind] = (seen[kind] ?? 0) + 1;
        if (records?.[kind] !== undefined && seen[kind]! > records[kind]!) continue;
        out.push(ev);
      }
    }
    return out;
  }

  /** Stores a model folder: files under a fresh id, then the manifest flip. */
  async importModel(
    name: string,
    files: Map<string, Uint8Array>,
    note?: string,
    extra: Partial<Pick<CheckpointMeta, 'origin' | 'metrics' | 'base'>> = {},
  ): Promise<CheckpointMeta> {
    await this.sweep();
    const bytes = [...files.values()].reduce((s, f) => s + f.byteLength, 0);
    const existing = await this.entry(name);
    if (existing?.kind === 'run') throw new Error(`'${name}' is the name of a stored run; import under another name`);
    const keep = existing ? `; the previous '${name}' is intact` : '';
    const est = await this.kv.estimate?.().catch(() => null);
    if (est && est.quota > 0 && est.quota - est.usage < bytes) {
      throw new CheckpointSaveError(
        `Not enough browser storage for '${name}' (${mib(bytes)} needed, ${mib(Math.max(0, est.quota - est.usage))} ` +
          `free)${keep}. Delete or export older checkpoints.`,
        true,
      );
    }
    const id = newId();
    const written: string[] = [];
    try {
      for (const [file, data] of files) {
        await this.kv.set(modelKey(id, file), own(data));
        written.push(modelKey(id, file));
      }
      const now = Date.now();
      const meta: CheckpointMeta = {
        name,
        kind: 'model',
        createdAt: now,
        updatedAt: now,
        bytes,
        cursor: null,
        metrics: {},
        base: name,
        files: [...files.keys()],
        dataId: id,
        ...(note ? { note } : {}),
        ...extra,
      };
      let replaced: CheckpointMeta | undefined;
      await this.kv.update<Manifest>(MANIFEST, (m) =>
        editManifest(m, name, (old) => {
          replaced = old;
          return meta;
        }),
      );
      if (replaced) await this.dropModelData(replaced).catch(() => undefined);
      return meta;
    } catch (e) {
      for (const k of written) await this.kv.del(k).catch(() => undefined);
      const quota = isQuotaError(e);
      const why = quota ? 'the browser storage quota is full' : failureText(e);
      throw new CheckpointSaveError(
        `Could not store '${name}' (${mib(bytes)}): ${why}${keep}.` +
          (quota ? ' Delete or export older checkpoints to make room.' : ''),
        quota,
      );
    }
  }

  /**
   * The files of an imported model, or of a run's base + latest student weights (an HF model folder; a LoRA
   * run's student adapters merged into its base).
   */
  async modelFiles(name: string): Promise<Map<string, Uint8Array>> {
    const e = await this.entry(name);
    if (!e) throw new Error(`no checkpoint named '${name}'`);
    const out = new Map<string, Uint8Array>();
    if (e.kind === 'model') {
      const id = modelIdOf(e);
      for (const f of e.files ?? []) {
        const b = await this.kv.get<Uint8Array>(modelKey(id, f));
        if (!b) throw new Error(`'${name}': its file ${f} is missing from browser storage (was site data cleared?)`);
        out.set(f, b);
      }
      return out;
    }
    const rs = this.runStorage(name);
    const pointer = await rs.get(POINTER_FILE);
    if (!pointer) throw new Error(`run '${name}' has no complete checkpoint yet`);
    const slot = (JSON.parse(new TextDecoder().decode(pointer)) as { slot: string }).slot;
    const weights = await rs.get(`checkpoints/${slot}/student.safetensors`);
    if (!weights) throw new Error(`run '${name}': the student weights of its checkpoint are missing`);
    out.set(
      'model.safetensors',
      e.config?.policies === 'lora'
        ? await this.mergedLoraStudent(name, e.config, weights)
        : joinShardFile(weights, `run '${name}' student.safetensors`),
    );
    for (const f of await rs.list()) {
      if (f.startsWith('base/') && f !== 'base/source.json' && f !== 'base/corpus.jsonl')
        out.set(f.slice(5), (await rs.get(f))!);
    }
    if (!out.has('config.json')) throw new Error(`run '${name}' does not record its model's config.json`);
    out.set('README.md', await this.runCard(rs, slot, e.config));
    return out;
  }

  /** The model card of a run's exported student: its settings and evaluations from the slot's state. */
  private async runCard(rs: RunStorage, slot: string, config?: SelfPlayConfig): Promise<Uint8Array> {
    const dec = new TextDecoder();
    const bytes = await rs.get(`checkpoints/${slot}/state.json`);
    if (!bytes) throw new Error(`a run's checkpoint ${slot} lacks its state.json`);
    const state = JSON.parse(dec.decode(bytes)) as RunState;
    const source = await rs.get('base/source.json');
    const license = source ? (JSON.parse(dec.decode(source)) as { license?: string }).license : undefined;
    const card = modelCard({ config: state.config ?? config, evals: state.evals, license });
    return new TextEncoder().encode(card);
  }

  /**
   * A LoRA run's checkpoint holds only the student's adapters; the frozen base is not stored with the run,
   * so it is rebuilt (opts.runBase) and the adapters are merged into it, as an export of the live model would.
   */
  private async mergedLoraStudent(name: string, config: SelfPlayConfig, adapterBytes: Uint8Array): Promise<Uint8Array> {
    if (!this.opts.runBase) {
      throw new Error(
        `run '${name}' trains LoRA adapters on a base model that is not stored with it; give the BrowserCheckpoints ` +
          'a runBase that rebuilds it to export the run',
      );
    }
    const base = await this.opts.runBase(name).catch((err: Error) => {
      throw new Error(
        `run '${name}': exporting merges the student's LoRA adapters into the run's base model, which could not be ` +
          `rebuilt: ${err.message}`,
      );
    });
    const file = parseSafetensors(adapterBytes, `run '${name}' student.safetensors`);
    const adapters = new Map([...file.tensors].map(([n, t]) => [n, { data: toFloat32(t), shape: t.shape }]));
    const merged = mergeLoraHost(base, adapters, {
      rank: config.loraRank,
      alpha: config.loraAlpha,
      what: `run '${name}' student.safetensors`,
    });
    const tensors = [...merged].map(([n, t]) => ({
      name: n,
      dtype: 'F32' as const,
      shape: t.shape,
      data: new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength),
    }));
    return writeSafetensors(tensors, { format: 'pt' });
  }

  async delete(name: string): Promise<boolean> {
    let removed: CheckpointMeta | undefined;
    await this.kv.update<Manifest>(MANIFEST, (m) =>
      editManifest(m, name, (old) => {
        removed = old;
        return null;
      }),
    );
    if (!removed) return false;
    if (removed.kind === 'model') await this.dropModelData(removed);
    else for (const k of await this.kv.keys()) if (k.startsWith(`run:${name}/`)) await this.kv.del(k);
    return true;
  }

  private async dropModelData(e: CheckpointMeta): Promise<void> {
    const id = modelIdOf(e);
    for (const f of e.files ?? []) await this.kv.del(modelKey(id, f));
  }

  /** Removes data no manifest entry refers to (an import that crashed before its flip, a deleted run). */
  sweep(): Promise<void> {
    this.swept ??= (async () => {
      const m = await this.manifest();
      const models = new Set(m.entries.filter((e) => e.kind === 'model').map(modelIdOf));
      const runs = new Set(m.entries.filter((e) => e.kind === 'run').map((e) => e.name));
      for (const k of await this.kv.keys()) {
        if (k.startsWith('model:') && !models.has(k.slice(6, k.indexOf('/')))) await this.kv.del(k);
        if (k.startsWith('run:') && !runs.has(k.slice(4, k.indexOf('/')))) await this.kv.del(k);
      }
    })();
    return this.swept;
  }
}

function modelIdOf(e: CheckpointMeta): string {
  return e.dataId ?? '';
}

/** The manifest with entry `name` replaced by fn(old) (or removed when fn returns null). */
function editManifest(
  m: Manifest | undefined,
  name: string,
  fn: (e: CheckpointMeta | undefined) => CheckpointMeta | null,
): Manifest {
  const man: Manifest = m ?? { version: 1, entries: [] };
  const next = fn(man.entries.find((e) => e.name === name));
  const rest = man.entries.filter((e) => e.name !== name);
  return { version: 1, entries: next ? [...rest, next] : rest };
}

/** The kinds of record a history keeps, by the names RunState.records counts them under. */
export type HistoryKind = 'metrics' | 'eval' | 'questions' | 'rollouts';

function historyKind(type: string): HistoryKind | null {
  if (!(RECORDED_KINDS as readonly string[]).includes(type)) return null;
  return type === 'question' ? 'questions' : type === 'rollout' ? 'rollouts' : (type as 'metrics' | 'eval');
}

/**
 * The self-play loop's RunStorage for one run. Writing the loop's pointer file also updates the run's
 * manifest entry (cursor, metrics, size) in the same transaction: the checkpoint becomes visible, and
 * resumable, exactly when it is complete.
 */
export class BrowserRunStorage implements RunStorage {
  /** Sizes of the files written per slot, and the last state.json per slot (for the manifest). */
  private slotBytes = new Map<string, Map<string, number>>();
  private slotState = new Map<string, Pick<RunState, 'evals' | 'metrics' | 'cursor' | 'records'>>();
  /** The run's records since the last checkpoint, written with the next one (see record()). */
  private pending: WireEvent[] = [];

  constructor(
    private kv: KvBackend,
    readonly runName: string,
  ) {}

  async put(name: string, bytes: Uint8Array): Promise<void> {
    const slot = /^checkpoints\/([^/]+)\//.exec(name)?.[1];
    try {
      if (name === POINTER_FILE) await this.flip(bytes);
      else await this.kv.set(runKey(this.runName, name), own(bytes));
    } catch (e) {
      if (e instanceof CheckpointSaveError) throw e;
      const quota = isQuotaError(e);
      const why = quota ? 'the browser storage quota is full' : failureText(e);
      throw new CheckpointSaveError(
        `Could not save a checkpoint of run '${this.runName}' (${name}): ${why}; ` +
          'the previous checkpoint is intact.' +
          (quota ? ' Delete or export older checkpoints to make room, then resume.' : ''),
        quota,
      );
    }
    if (slot) {
      const sizes = this.slotBytes.get(slot) ?? new Map<string, number>();
      sizes.set(name, bytes.byteLength);
      this.slotBytes.set(slot, sizes);
      if (name.endsWith('/state.json')) {
        try {
          const s = JSON.parse(new TextDecoder().decode(bytes)) as RunState;
          this.slotState.set(slot, {
            evals: s.evals ?? [],
            metrics: s.metrics ?? [],
            cursor: s.cursor,
            records: s.records,
          });
        } catch {
          /* the loop's state is opaque here; the manifest just shows fewer metrics */
        }
      }
    }
  }

  /**
   * Keeps one of the run's events for its history (the kinds a recording holds; others are passed over). The
   * records wait for the next checkpoint, which stores them in the transaction that makes it visible.
   */
  record(ev: RunEvent): void {
    if ((RECORDED_KINDS as readonly string[]).includes(ev.type)) this.pending.push(packEvent(ev).wire);
  }

  private async flip(pointer: Uint8Array): Promise<void> {
    const p = JSON.parse(new TextDecoder().decode(pointer)) as { slot: string; cursor: CheckpointMeta['cursor'] };
    const sizes = this.slotBytes.get(p.slot);
    const state = this.slotState.get(p.slot);
    const bytes = sizes ? [...sizes.values()].reduce((a, b) => a + b, 0) : 0;
    const chunk = this.pending;
    const r = state?.records;
    const seq = r ? r.metrics + r.questions + r.rollouts + r.eval : Date.now();
    const more: [string, unknown][] = chunk.length
      ? [[runKey(this.runName, `${HISTORY}${String(seq).padStart(12, '0')}`), chunk]]
      : [];
    await this.kv.setAndUpdate<Manifest>(
      runKey(this.runName, POINTER_FILE),
      own(pointer),
      MANIFEST,
      (m) =>
        editManifest(m, this.runName, (old) => ({
          ...(old ?? { name: this.runName, kind: 'run' as const, createdAt: Date.now(), base: '', metrics: {} }),
          updatedAt: Date.now(),
          bytes: bytes || old?.bytes || 0,
          cursor: p.cursor,
          metrics: state ? summarize(state) : (old?.metrics ?? {}),
        })),
      more,
    );
    // Only once stored: a failed save keeps them for the next checkpoint.
    this.pending = this.pending.slice(chunk.length);
  }

  async get(name: string): Promise<Uint8Array | null> {
    return (await this.kv.get<Uint8Array>(runKey(this.runName, name))) ?? null;
  }

  async list(): Promise<string[]> {
    const prefix = `run:${this.runName}/`;
    return (await this.kv.keys())
      .filter((k) => k.startsWith(prefix))
      .map((k) => k.slice(prefix.length))
      .sort();
  }
}

/** idb-keyval in its own database ('piplay', store 'checkpoints'); works in a page and in a worker. */
export function idbBackend(store: UseStore = createStore('piplay', 'checkpoints')): KvBackend {
  return {
    get: (k) => get(k, store),
    set: (k, v) => set(k, v, store),
    del: (k) => del(k, store),
    update: (k, fn) => update(k, fn, store),
    setAndUpdate: (k, v, other, fn, more = []) =>
      store('readwrite', (s) => {
        s.put(v, k);
        for (const [mk, mv] of more) s.put(mv, mk);
        const r = s.get(other);
        r.onsuccess = () => {
          try {
            s.put(fn(r.result), other);
          } catch (e) {
            s.transaction.abort();
            throw e;
          }
        };
        return promisifyRequest(s.transaction);
      }),
    keys: async () => (await keys(store)).map(String),
    async estimate() {
      const s = (globalThis.navigator as Navigator | undefined)?.storage;
      if (!s?.estimate) return null;
      const e = await s.estimate();
      return e.quota ? { usage: e.usage ?? 0, quota: e.quota } : null;
    },
  };
}

/** A Map-backed backend (tests). `failSetAfter` makes the n-th and later sets throw a quota error. */
export function memoryBackend(
  map = new Map<string, unknown>(),
): KvBackend & { map: Map<string, unknown>; failSets: (n: number | null) => void } {
  let budget: number | null = null;
  const quota = () => Object.assign(new Error('The quota has been exceeded.'), { name: 'QuotaExceededError' });
  const spend = () => {
    if (budget === null) return;
    if (budget <= 0) throw quota();
    budget--;
  };
  return {
    map,
    failSets: (n) => (budget = n),
    get: async <T>(k: string) => map.get(k) as T | undefined,
    set: async (k, v) => {
      spend();
      map.set(k, v);
    },
    del: async (k) => void map.delete(k),
    update: async <T>(k: string, fn: (old: T | undefined) => T) => {
      spend();
      map.set(k, fn(map.get(k) as T | undefined));
    },
    setAndUpdate: async <T>(
      k: string,
      v: unknown,
      other: string,
      fn: (old: T | undefined) => T,
      more: readonly [string, unknown][] = [],
    ) => {
      spend();
      const next = fn(map.get(other) as T | undefined);
      map.set(k, v);
      for (const [mk, mv] of more) map.set(mk, mv);
      map.set(other, next);
    },
    keys: async () => [...map.keys()],
  };
}
