// The API the page calls in the engine worker (through comlink). All GPU work happens behind it.
import { Engine, type EngineInfo } from '../gpu/engine.ts';
import type { GpuHost } from '../gpu/host/types.ts';
import { matmul } from '../gpu/ops/matmul.ts';

export interface InitResult {
  ok: boolean;
  info?: EngineInfo;
  /** A message for the user when WebGPU is missing or unusable. */
  error?: string;
}

export class WorkerApi {
  private engine: Engine | null = null;

  constructor(private host: GpuHost) {}

  async init(): Promise<InitResult> {
    try {
      this.engine ??= await Engine.create(this.host);
      return { ok: true, info: this.engine.info };
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
  }

  /** A small matmul checked on the CPU: proves the device computes, and shows its speed. */
  async selfTest(n = 64): Promise<{ maxError: number; ms: number }> {
    const e = this.need();
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

  private need(): Engine {
    if (!this.engine) throw new Error('piplay: the engine is not initialised (call init first)');
    return this.engine;
  }
}
