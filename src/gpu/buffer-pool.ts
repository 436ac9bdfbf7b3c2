// A pool of GPU buffers, bucketed by rounded size and usage, that gives memory back.
//
// A released buffer may still be read or written by commands that were encoded but not yet submitted, so
// it is not reusable at once: it waits in `pending` until the engine's next submission. After that it is
// free: the queue runs its operations in order, so a later `queue.writeBuffer` into the recycled buffer, or
// a later submission using it, happens after the submitted work that last used it. (Waiting for the GPU to
// report the work done instead would keep every buffer a synchronous forward pass frees out of reach until
// the pass awaits something, so the pass could never reuse its own freed memory.)
//
// Free buffers are a cache, bounded three ways: their bytes never exceed `maxFreeBytes` (the least recently
// freed go first); a request that no free buffer serves (a new shape: the cached ones are likely of shapes
// that are done) first cuts them to `freeFraction` of the bytes in use; and an allocation that would take
// the pool past `budgetBytes` first destroys free buffers. So the device memory stays near what is in use.
// `trim()` empties the cache (the engine's users call it between stages whose shapes differ).
// A request may take a free buffer up to two size classes larger than its own, so a new sequence length
// reuses what the last one freed instead of allocating beside it.

export interface PoolStats {
  /** Bytes in buffers the pool created and has not destroyed. */
  allocatedBytes: number;
  /** Bytes in buffers handed out and not yet released. */
  liveBytes: number;
  /** Bytes in free buffers kept for reuse. */
  freeBytes: number;
  buffers: number;
  /** The largest allocatedBytes since the pool was made or `resetPeak()` was called: the device memory it needed. */
  peakAllocatedBytes: number;
  /** The largest liveBytes over the same span: the memory the work itself held at once. */
  peakLiveBytes: number;
  /**
   * The smallest allocatedBytes since the pool was made or `resetLow()` was called: what a run keeps at its leanest
   * (between stages, after a trim), however briefly, so a sampler that reads it now and then misses no low point.
   */
  lowAllocatedBytes: number;
}

export interface PoolOptions {
  /** Most bytes kept in free buffers (default 512 MiB). */
  maxFreeBytes?: number;
  /** On a request no free buffer serves, free bytes are cut to this share of the live bytes (default 1/8). */
  freeFraction?: number;
  /** Bytes the pool tries to stay under by destroying free buffers before allocating (default: no limit). */
  budgetBytes?: number;
  /** Largest buffer a request may be handed (the storage-binding limit: a buffer is bound whole). */
  maxBufferBytes?: number;
}

/** Rounds a byte size up to its bucket: multiples of 256 B below 64 KiB, then quarter powers of two. */
export function bucketSize(bytes: number): number {
  const b = Math.max(16, bytes);
  if (b <= 65536) return Math.ceil(b / 256) * 256;
  const pow = 2 ** Math.floor(Math.log2(b));
  const quarter = pow / 4;
  return Math.ceil(b / quarter) * quarter;
}

/** The bucket after `size` (a bucket size itself). */
function nextBucket(size: number): number {
  return bucketSize(size + 1);
}

/** How many size classes above its own a request may reuse. */
const REUSE_CLASSES = 2;

export class BufferPool {
  /** Free buffers per `usage:size` key. */
  private free = new Map<string, Set<GPUBuffer>>();
  /** Every free buffer, least recently freed first (a Set keeps insertion order). */
  private lru = new Set<GPUBuffer>();
  private pending: GPUBuffer[] = [];
  private sizes = new WeakMap<GPUBuffer, number>();
  private stats: PoolStats = {
    allocatedBytes: 0,
    liveBytes: 0,
    freeBytes: 0,
    buffers: 0,
    peakAllocatedBytes: 0,
    peakLiveBytes: 0,
    lowAllocatedBytes: 0,
  };
  readonly maxFreeBytes: number;
  readonly freeFraction: number;
  budgetBytes: number;
  private readonly maxBufferBytes: number;

  constructor(
    private device: GPUDevice,
    opts: PoolOptions = {},
  ) {
    this.maxFreeBytes = opts.maxFreeBytes ?? 512 * 2 ** 20;
    this.freeFraction = opts.freeFraction ?? 1 / 8;
    this.budgetBytes = opts.budgetBytes ?? Infinity;
    this.maxBufferBytes = opts.maxBufferBytes ?? Infinity;
  }

  acquire(bytes: number, usage: GPUBufferUsageFlags, label?: string): GPUBuffer {
    let size = bucketSize(bytes);
    // Near the binding limit the bucket could round past it; such a buffer is made at its own size.
    if (size > this.maxBufferBytes) size = Math.max(16, Math.ceil(bytes / 16) * 16);
    let buf = this.takeFree(usage, size);
    if (!buf) {
      const keep = this.freeFraction * this.stats.liveBytes;
      if (this.stats.freeBytes > keep) this.evict(this.stats.freeBytes - keep);
      if (this.stats.allocatedBytes + size > this.budgetBytes)
        this.evict(this.stats.allocatedBytes + size - this.budgetBytes);
      buf = this.device.createBuffer({ size, usage, label });
      this.sizes.set(buf, size);
      this.stats.allocatedBytes += size;
      this.stats.buffers++;
      this.stats.peakAllocatedBytes = Math.max(this.stats.peakAllocatedBytes, this.stats.allocatedBytes);
    }
    this.stats.liveBytes += this.sizes.get(buf)!;
    this.stats.peakLiveBytes = Math.max(this.stats.peakLiveBytes, this.stats.liveBytes);
    return buf;
  }

  /** A free buffer of this usage in the request's size class or up to REUSE_CLASSES above it. */
  private takeFree(usage: GPUBufferUsageFlags, size: number): GPUBuffer | undefined {
    let s = size;
    for (let k = 0; k <= REUSE_CLASSES && s <= this.maxBufferBytes; k++, s = nextBucket(s)) {
      const set = this.free.get(`${usage}:${s}`);
      if (!set || set.size === 0) continue;
      const buf = set.values().next().value!;
      set.delete(buf);
      this.lru.delete(buf);
      this.stats.freeBytes -= s;
      return buf;
    }
    return undefined;
  }

  /** Hands a buffer back; it becomes reusable once the GPU has finished all work submitted so far. */
  release(buf: GPUBuffer): void {
    this.stats.liveBytes -= this.sizes.get(buf) ?? 0;
    this.pending.push(buf);
  }

  /**
   * Called right after a queue submission: everything released before it is free, since whatever uses a
   * buffer next is queued after that submission.
   */
  afterSubmit(): void {
    const batch = this.pending;
    this.pending = [];
    for (const buf of batch) this.putFree(buf);
    if (this.stats.freeBytes > this.maxFreeBytes) this.evict(this.stats.freeBytes - this.maxFreeBytes);
  }

  private putFree(buf: GPUBuffer): void {
    const size = this.sizes.get(buf)!;
    const key = `${buf.usage}:${size}`;
    let set = this.free.get(key);
    if (!set) this.free.set(key, (set = new Set()));
    set.add(buf);
    this.lru.add(buf);
    this.stats.freeBytes += size;
  }

  /** Destroys free buffers, least recently freed first, until at least `bytes` are given back. */
  private evict(bytes: number): void {
    let freed = 0;
    for (const buf of this.lru) {
      if (freed >= bytes) break;
      const size = this.sizes.get(buf)!;
      this.lru.delete(buf);
      this.free.get(`${buf.usage}:${size}`)!.delete(buf);
      this.destroy(buf, size);
      freed += size;
    }
  }

  private destroy(buf: GPUBuffer, size: number): void {
    this.stats.allocatedBytes -= size;
    this.stats.lowAllocatedBytes = Math.min(this.stats.lowAllocatedBytes, this.stats.allocatedBytes);
    this.stats.freeBytes -= size;
    this.stats.buffers--;
    buf.destroy();
  }

  /** Destroys every free buffer (the GPU memory goes back to the driver). */
  trim(): void {
    for (const buf of this.lru) this.destroy(buf, this.sizes.get(buf)!);
    this.lru.clear();
    this.free.clear();
  }

  /** Starts a new span for the peak statistics (from what is allocated and live now). */
  resetPeak(): void {
    this.stats.peakAllocatedBytes = this.stats.allocatedBytes;
    this.stats.peakLiveBytes = this.stats.liveBytes;
  }

  /** Starts a new span for `lowAllocatedBytes` (from what is allocated now). */
  resetLow(): void {
    this.stats.lowAllocatedBytes = this.stats.allocatedBytes;
  }

  getStats(): PoolStats {
    return { ...this.stats };
  }
}
