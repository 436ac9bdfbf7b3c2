// A pool of GPU buffers, bucketed by rounded size and usage.
//
// A released buffer may still be read or written by commands that were encoded but not yet finished
// (or not yet submitted), so it is not reusable at once: it waits in `pending` until the engine's next
// submission, then in an in-flight list until the GPU reports that submission done. Only then does it
// go back to the free lists. This is what makes `queue.writeBuffer` into a recycled buffer safe.

export interface PoolStats {
  /** Bytes in buffers the pool created and has not destroyed. */
  allocatedBytes: number;
  /** Bytes in buffers handed out and not yet released. */
  liveBytes: number;
  buffers: number;
}

/** Rounds a byte size up to its bucket: multiples of 256 B below 64 KiB, then quarter powers of two. */
export function bucketSize(bytes: number): number {
  const b = Math.max(16, bytes);
  if (b <= 65536) return Math.ceil(b / 256) * 256;
  const pow = 2 ** Math.floor(Math.log2(b));
  const quarter = pow / 4;
  return Math.ceil(b / quarter) * quarter;
}

export class BufferPool {
  private free = new Map<string, GPUBuffer[]>();
  private pending: GPUBuffer[] = [];
  private sizes = new WeakMap<GPUBuffer, number>();
  private stats: PoolStats = { allocatedBytes: 0, liveBytes: 0, buffers: 0 };

  constructor(private device: GPUDevice) {}

  acquire(bytes: number, usage: GPUBufferUsageFlags, label?: string): GPUBuffer {
    const size = bucketSize(bytes);
    const key = `${usage}:${size}`;
    const list = this.free.get(key);
    let buf = list?.pop();
    if (!buf) {
      buf = this.device.createBuffer({ size, usage, label });
      this.sizes.set(buf, size);
      this.stats.allocatedBytes += size;
      this.stats.buffers++;
    }
    this.stats.liveBytes += size;
    return buf;
  }

  /** Hands a buffer back; it becomes reusable once the GPU has finished all work submitted so far. */
  release(buf: GPUBuffer): void {
    this.stats.liveBytes -= this.sizes.get(buf) ?? 0;
    this.pending.push(buf);
  }

  /**
   * Called right after a queue submission: everything released before it becomes free once that
   * submission (and so every earlier use of the buffers) has completed.
   */
  afterSubmit(queue: GPUQueue): Promise<void> {
    if (this.pending.length === 0) return Promise.resolve();
    const batch = this.pending;
    this.pending = [];
    return queue.onSubmittedWorkDone().then(() => {
      for (const buf of batch) this.putFree(buf);
    });
  }

  private putFree(buf: GPUBuffer): void {
    const key = `${buf.usage}:${this.sizes.get(buf)}`;
    let list = this.free.get(key);
    if (!list) this.free.set(key, (list = []));
    list.push(buf);
  }

  /** Destroys every free buffer (the GPU memory goes back to the driver). */
  trim(): void {
    for (const list of this.free.values()) {
      for (const buf of list) {
        this.stats.allocatedBytes -= this.sizes.get(buf) ?? 0;
        this.stats.buffers--;
        buf.destroy();
      }
    }
    this.free.clear();
  }

  getStats(): PoolStats {
    return { ...this.stats };
  }
}
