// The checkpoints in IndexedDB as the page sees them: list, settings, delete, the history of a stored run,
// export as an HF-format zip and import of a model folder (a zip or picked files).
import * as Comlink from 'comlink';
import { parseConfig } from '../model/config.ts';
import { MissingFileError, parseJsonFile } from '../model/files.ts';
import { latestCheckpoint } from '../selfplay/checkpoint.ts';
import type { SelfPlayConfig } from '../selfplay/config.ts';
import type { CheckpointMeta } from './checkpoint-store.ts';
import { isHfModelFile, relativeNames } from './model-source.ts';
import { isPlainFileName, safeName } from './names.ts';
import { stripConfig, type WorkerSession } from './session.ts';
import { wireTransfer, type WireEvent } from './wire.ts';
import { lockedMessage, runLocked } from './run-lock.ts';
import { listZip, readZip, writeZip } from './zip.ts';

/** The most an imported model folder may hold: past the largest model a browser tab can train (Qwen3-0.6B in f32
 *  is 3 GiB). */
export const MAX_IMPORT_BYTES = 4 * 2 ** 30;
/** The most a folder's other files (config, tokenizer, notes) may each hold. */
const MAX_TEXT_FILE_BYTES = 64 * 2 ** 20;

export class CheckpointService {
  constructor(private readonly s: WorkerSession) {}

  /**
   * What the page showed of a stored run (finished or not), to view it again: its step metrics, evaluations,
   * questions and rollouts up to its latest checkpoint, and its settings.
   */
  async runHistory(name: string): Promise<{ meta: CheckpointMeta; events: WireEvent[] }> {
    const meta = await this.s.store.entry(name);
    if (meta?.kind !== 'run') throw new Error(`no stored run named '${name}'`);
    const latest = await latestCheckpoint(this.s.store.runStorage(name));
    const events = await this.s.store.history(name, latest?.state.records);
    return Comlink.transfer({ meta: stripConfig(meta), events }, events.flatMap(wireTransfer));
  }

  async listCheckpoints(): Promise<CheckpointMeta[]> {
    return (await this.s.store.list()).map(stripConfig);
  }

  /** The settings a stored run was made with (the page shows them when resuming). */
  async checkpointConfig(name: string): Promise<SelfPlayConfig | null> {
    return (await this.s.store.entry(name))?.config ?? null;
  }

  async deleteCheckpoint(name: string): Promise<boolean> {
    if (this.s.active?.name === name) throw new Error(`'${name}' is the active run; stop it first`);
    if (await runLocked(name)) throw new Error(lockedMessage(name));
    return this.s.store.delete(name);
  }

  /** An HF-format model folder of the checkpoint (a run: its student) as a store-only zip. */
  async exportCheckpoint(name: string): Promise<{ fileName: string; blob: Blob }> {
    return zipFolder(name, await this.s.store.modelFiles(name));
  }

  /** Stores a model folder (a zip, or a picked folder) so runs can start from it. */
  async importCheckpoint(
    input: { kind: 'zip'; name: string; bytes: Uint8Array } | { kind: 'files'; files: File[] },
  ): Promise<CheckpointMeta> {
    let files = new Map<string, Uint8Array>();
    let name: string;
    if (input.kind === 'zip') {
      // The directory first: which files a model folder uses, and whether their declared sizes are sane, before
      // a byte is inflated (a zip bomb is refused at once; what is not used is never inflated).
      const listed = listZip(input.bytes, input.name);
      const top = listed[0]?.name.split('/')[0];
      const nested = listed.length > 0 && listed.every((en) => en.name.includes('/') && en.name.split('/')[0] === top);
      const inFolder = (n: string) => (nested ? n.slice(top!.length + 1) : n);
      const entries = await readZip(input.bytes, input.name, {
        keep: (n) => isPlainFileName(inFolder(n)) && isHfModelFile(inFolder(n)),
        maxBytes: (n) => (inFolder(n).endsWith('.safetensors') ? MAX_IMPORT_BYTES : MAX_TEXT_FILE_BYTES),
        maxTotalBytes: MAX_IMPORT_BYTES,
      });
      for (const en of entries) files.set(inFolder(en.name), en.data);
      name = safeName(nested ? top! : input.name.replace(/\.zip$/i, ''), 'imported');
    } else {
      for (const [f, file] of relativeNames(input.files)) files.set(f, new Uint8Array(await file.arrayBuffer()));
      const p = (input.files[0] as (File & { webkitRelativePath?: string }) | undefined)?.webkitRelativePath ?? '';
      name = safeName(p.includes('/') ? p.split('/')[0]! : '', 'imported');
    }
    files = new Map([...files].filter(([f]) => isPlainFileName(f) && isHfModelFile(f)));
    const cfgBytes = files.get('config.json');
    if (!cfgBytes) throw new MissingFileError('config.json', `'${name}'`);
    parseConfig(parseJsonFile(cfgBytes, 'config.json') as object);
    if (![...files.keys()].some((f) => f.endsWith('.safetensors')))
      throw new Error(`'${name}' holds no .safetensors weights`);
    for (const f of ['tokenizer.json', 'tokenizer_config.json'])
      if (!files.has(f)) throw new Error(`'${name}' lacks ${f} (the tokenizer is needed to train)`);
    const existing = new Set((await this.s.store.list()).map((c) => c.name));
    let unique = name;
    for (let k = 2; existing.has(unique); k++) unique = `${name}-${k}`;
    const meta = await this.s.store.importModel(unique, files, 'imported model folder', { origin: 'imported' });
    void this.s.postCheckpoints();
    return stripConfig(meta);
  }
}

/** A model folder's files as a store-only zip holding one folder named after the model. */
export function zipFolder(name: string, files: Map<string, Uint8Array>): { fileName: string; blob: Blob } {
  const folder = safeName(name, 'model');
  const entries = [...files]
    .filter(([f]) => isPlainFileName(f) && isHfModelFile(f))
    .map(([f, data]) => ({ name: `${folder}/${f}`, data }));
  return { fileName: `${folder}.zip`, blob: writeZip(entries) };
}
