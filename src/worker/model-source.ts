// Where the run's base model comes from: the embedded default served from public/models/<name>/, a folder
// the user picked on disk, a Hugging Face model id, or a checkpoint stored in the browser.
import { filesFromMap, filesFromUrl, MissingFileError, type ReadFile } from '../model/files.ts';
import type { BrowserCheckpoints } from './checkpoint-store.ts';
import { hubReadFile, type DownloadProgress } from './hub.ts';

export type ModelSource =
  | { kind: 'random-tiny' }
  | { kind: 'embedded'; name: string }
  | { kind: 'files'; files: File[] }
  /** endpoint: the hub's address (https://huggingface.co when absent). */
  | { kind: 'hub'; id: string; revision?: string; endpoint?: string }
  | { kind: 'checkpoint'; name: string };

export interface ResolvedSource {
  readFile: ReadFile;
  /** For messages: "the embedded model 'tiny'", "Hugging Face model 'Qwen/Qwen3-0.6B'", ... */
  where: string;
}

/** Base URL of the embedded models (public/models/), from the page's origin and Vite's base. */
export function embeddedBase(): string {
  const origin = (globalThis as { location?: Location }).location?.origin ?? 'http://localhost';
  const base = (import.meta.env?.BASE_URL as string | undefined) ?? '/';
  return new URL(`${base.replace(/\/?$/, '/')}models/`, origin).href;
}

/**
 * Names of a picked folder's files relative to the folder: "my-model/config.json" -> "config.json"
 * (a directory picker prefixes every file with the folder's own name).
 */
export function relativeNames(files: readonly File[]): Map<string, File> {
  const paths = files.map((f) => (f as File & { webkitRelativePath?: string }).webkitRelativePath || f.name);
  const first = paths[0]?.split('/')[0];
  const prefixed = paths.length > 0 && paths.every((p) => p.includes('/') && p.split('/')[0] === first);
  const map = new Map<string, File>();
  files.forEach((f, i) => map.set(prefixed ? paths[i]!.slice(first!.length + 1) : paths[i]!, f));
  return map;
}

export function describeSource(src: ModelSource): string {
  switch (src.kind) {
    case 'random-tiny':
      return 'a new random tiny model';
    case 'embedded':
      return `the embedded model '${src.name}'`;
    case 'files': {
      const p = (src.files[0] as (File & { webkitRelativePath?: string }) | undefined)?.webkitRelativePath;
      return p?.includes('/') ? `the folder '${p.split('/')[0]}'` : 'the chosen files';
    }
    case 'hub':
      return `Hugging Face model '${src.id.trim()}'`;
    case 'checkpoint':
      return `checkpoint '${src.name}'`;
  }
}

/** A ReadFile for a model folder source (random-tiny has no folder). */
export function resolveSource(
  src: Exclude<ModelSource, { kind: 'random-tiny' }>,
  store: BrowserCheckpoints,
  onProgress?: (p: DownloadProgress) => void,
): ResolvedSource {
  const where = describeSource(src);
  switch (src.kind) {
    case 'embedded':
      return { readFile: filesFromUrl(`${embeddedBase()}${encodeURIComponent(src.name)}/`), where };
    case 'files':
      return { readFile: filesFromMap(relativeNames(src.files), where), where };
    case 'hub':
      return { readFile: hubReadFile(src, onProgress), where };
    case 'checkpoint': {
      let loaded: Promise<Map<string, Uint8Array>> | null = null;
      return {
        where,
        readFile: async (name) => {
          loaded ??= store.modelFiles(src.name);
          const f = (await loaded).get(name);
          if (!f) throw new MissingFileError(name, where);
          return f;
        },
      };
    }
  }
}

/**
 * Files of an HF model folder worth exporting (weights, config, tokenizer, generation settings, how it was trained).
 */
export function isHfModelFile(name: string): boolean {
  return (
    name === 'config.json' ||
    name === 'TRAINING.md' ||
    name === 'generation_config.json' ||
    name.endsWith('.safetensors') ||
    name === 'model.safetensors.index.json' ||
    name.startsWith('tokenizer') ||
    name === 'special_tokens_map.json' ||
    name === 'chat_template.jinja' ||
    name === 'vocab.json' ||
    name === 'merges.txt' ||
    name === 'README.md'
  );
}
