// Where a run keeps its checkpoints: a tiny key-value interface, so that Node writes files (src/cli/) and
// the browser writes IndexedDB (storage-idb.ts) while the run itself does not know which.

export interface RunStorage {
  put(name: string, bytes: Uint8Array): Promise<void>;
  /** The bytes stored under `name`, or null when there are none. */
  get(name: string): Promise<Uint8Array | null>;
  /** Every stored name. */
  list(): Promise<string[]>;
}

/** Storage in memory (tests, and runs that keep nothing). Copies on the way in and out. */
export class MemoryStorage implements RunStorage {
  readonly files = new Map<string, Uint8Array>();

  async put(name: string, bytes: Uint8Array): Promise<void> {
    this.files.set(name, bytes.slice());
  }

  async get(name: string): Promise<Uint8Array | null> {
    const b = this.files.get(name);
    return b ? b.slice() : null;
  }

  async list(): Promise<string[]> {
    return [...this.files.keys()].sort();
  }

  /** An independent copy (e.g. to resume from a checkpoint while the original run goes on). */
  clone(): MemoryStorage {
    const c = new MemoryStorage();
    for (const [k, v] of this.files) c.files.set(k, v.slice());
    return c;
  }
}

export const textBytes = (s: string): Uint8Array => new TextEncoder().encode(s);
export const bytesText = (b: Uint8Array): string => new TextDecoder().decode(b);

/** The SHA-256 of some bytes, in hex (Web Crypto: the browser and Node alike). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}
