// Where a model's files come from. Loaders take a `ReadFile` — a function from a file name inside the model
// folder ("config.json", "model-00001-of-00002.safetensors") to its bytes — so the same code loads a model
// from files the user dropped on the page, from a URL, or from a folder on disk in Node (the Node host's
// src/gpu/host/node-files.ts).

const MiB = 2 ** 20;

/**
 * The most bytes a file of a model folder may have, by its name (undefined: the weights, whose size the memory plan
 * judges). A config or tokenizer file past these is not one, and is refused before it is read or downloaded.
 */
export function modelFileCap(name: string): number | undefined {
  if (name.endsWith('.safetensors')) return undefined;
  if (name === 'tokenizer.json') return 512 * MiB;
  if (name.endsWith('.json')) return 64 * MiB;
  return 16 * MiB; // chat_template.jinja, README.md
}

/** Reads one file of a model folder by its name. Rejects with a MissingFileError when there is no such file. */
export type ReadFile = (name: string) => Promise<Uint8Array>;

/** Thrown by a ReadFile for a file that does not exist; loaders use it to try alternatives (sharded or not). */
export class MissingFileError extends Error {
  constructor(
    readonly fileName: string,
    readonly where: string,
  ) {
    super(`${fileName} was not found in ${where}`);
    this.name = 'MissingFileError';
  }
}

/** True for a MissingFileError and for the "no such file" errors of Node's fs. */
export function isMissingFile(e: unknown): boolean {
  if (e instanceof MissingFileError) return true;
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || (e as { name?: unknown } | null)?.name === 'NotFoundError';
}

export type FileContent = Uint8Array | ArrayBuffer | ArrayBufferView | string | Blob;

/** Bytes of one in-memory file (strings are UTF-8 encoded). */
export async function contentBytes(c: FileContent): Promise<Uint8Array> {
  if (typeof c === 'string') return new TextEncoder().encode(c);
  if (c instanceof Uint8Array) return c;
  if (c instanceof ArrayBuffer) return new Uint8Array(c);
  if (ArrayBuffer.isView(c)) return new Uint8Array(c.buffer, c.byteOffset, c.byteLength);
  return new Uint8Array(await (c as Blob).arrayBuffer());
}

/** A ReadFile over in-memory files (e.g. the File objects of a dropped folder, keyed by their names). */
export function filesFromMap(
  files: Record<string, FileContent> | Map<string, FileContent>,
  where = 'the given files',
): ReadFile {
  const map = files instanceof Map ? files : new Map(Object.entries(files));
  return async (name) => {
    const c = map.get(name);
    if (c === undefined) throw new MissingFileError(name, where);
    return contentBytes(c);
  };
}

/** A ReadFile over a URL prefix ("https://host/models/qwen3/" or "/models/qwen3"); a 404 is a missing file. */
export function filesFromUrl(baseUrl: string, fetchFn: typeof fetch = globalThis.fetch): ReadFile {
  const base = baseUrl.endsWith('/') ? baseUrl : baseUrl + '/';
  return async (name) => {
    const url = base + name.split('/').map(encodeURIComponent).join('/');
    let res: Response;
    try {
      res = await fetchFn(url);
    } catch (e) {
      throw new Error(`could not fetch ${url}: ${(e as Error).message}`);
    }
    if (res.status === 404) throw new MissingFileError(name, base);
    if (!res.ok) throw new Error(`could not fetch ${url}: HTTP ${res.status} ${res.statusText}`);
    try {
      return await readBody(res, modelFileCap(name));
    } catch (e) {
      if (e instanceof BodyTooLargeError)
        throw new Error(`could not fetch ${url}: ${e.message}: is it the right file?`);
      throw e;
    }
  };
}

/** A body past the cap of its kind: it is not read further. */
export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
}

/** A response's body, read to its end but never past `cap` bytes (BodyTooLargeError: one that runs on). */
export async function readBody(res: Response, cap: number | undefined): Promise<Uint8Array> {
  if (cap === undefined || !res.body) return new Uint8Array(await res.arrayBuffer());
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > cap) {
      await reader.cancel().catch(() => {});
      throw new BodyTooLargeError(`the answer ran past ${cap} bytes without ending`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(n);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Reads a file, or returns null when it does not exist (other errors propagate). */
export async function readOptional(readFile: ReadFile, name: string): Promise<Uint8Array | null> {
  try {
    return await readFile(name);
  } catch (e) {
    if (isMissingFile(e)) return null;
    throw e;
  }
}

/** Decodes UTF-8 text and parses it as JSON; errors name the file. */
export function parseJsonFile(bytes: Uint8Array, name: string): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new Error(`${name} is not valid UTF-8 text`);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${name} is not valid JSON (${(e as Error).message})`);
  }
}
