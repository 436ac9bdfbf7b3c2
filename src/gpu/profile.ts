// An optional profile of where a run's time goes, by phase (a label such as 'student / forward teacher').
// Off by default (the engine's `profile` is null and ops pay one null check). When on, the engine starts a
// new submission whenever the phase changes and times each submission's GPU work from its submit to its
// completion (queue.onSubmittedWorkDone, in order), so GPU time lands on the phase that recorded the work
// even though it runs later; host time (recording, sampling, waits) lands on the phase active at the time.
// By kernel on a device with GPU timestamps, each dispatch's own time is charged instead (src/gpu/stream.ts).
export interface PhaseTotals {
  /** Host wall time while the phase was active (includes the waits for read-backs made in it). */
  wallSeconds: number;
  /** GPU busy time of the submissions recorded in this phase. */
  gpuSeconds: number;
  dispatches: number;
  submits: number;
  reads: number;
  /** Tokens processed: sampled tokens for generation, batch x time for forward passes. */
  tokens: number;
  /** Decoding steps (one sampled token per live row; the prefill counts as one): generation only. */
  steps: number;
}

/** A phase with nothing charged yet. */
export const blank = (): PhaseTotals => ({
  wallSeconds: 0,
  gpuSeconds: 0,
  dispatches: 0,
  submits: 0,
  reads: 0,
  tokens: 0,
  steps: 0,
});

export class Profile {
  /** Outer label (e.g. the loop's stage), set by whoever drives the run. */
  stage = 'run';
  /**
   * Also split phases by kernel: each dispatch timed by GPU timestamps in a compute pass of its own where the device
   * has them, else one submission per kernel change (slower, and a kernel's time then holds a submission's cost).
   */
  byKernel = false;
  private stack: string[] = [];
  private since = performance.now();
  private lastDone = 0;
  readonly phases = new Map<string, PhaseTotals>();

  /** The current phase: the stage and the innermost label. */
  get phase(): string {
    const top = this.stack[this.stack.length - 1];
    return top ? `${this.stage} / ${top}` : `${this.stage} / other`;
  }

  /** The phase a dispatch of `kernel` is charged to (phaseKernel splits it again). */
  dispatchPhase(kernel: string): string {
    return this.byKernel ? `${this.phase} [${kernel}]` : this.phase;
  }

  private totals(phase: string): PhaseTotals {
    let t = this.phases.get(phase);
    if (!t) this.phases.set(phase, (t = blank()));
    return t;
  }

  /** Charges the host time since the last change to the current phase. */
  private tick(): void {
    const now = performance.now();
    this.totals(this.phase).wallSeconds += (now - this.since) / 1000;
    this.since = now;
  }

  /** Enters a labelled phase; the returned function leaves it. Nested labels charge the innermost. */
  enter(label: string): () => void {
    this.tick();
    this.stack.push(label);
    return () => {
      this.tick();
      this.stack.pop();
    };
  }

  /** Like `enter`, but only outside any labelled phase (a forward pass inside generation stays generation). */
  enterOuter(label: string, tokens = 0): () => void {
    if (this.stack.length > 0) return () => {};
    const leave = this.enter(label);
    this.count('tokens', tokens);
    return leave;
  }

  /** Sets the stage (charging the time so far to the previous one). */
  setStage(stage: string): void {
    this.tick();
    this.stage = stage;
  }

  count(what: 'dispatches' | 'submits' | 'reads' | 'tokens' | 'steps', n = 1, phase = this.phase): void {
    this.totals(phase)[what] += n;
  }

  /** A submission of `phase`'s work made at `submitted` (ms) finished at `done` (ms); calls come in order. */
  gpuDone(phase: string, submitted: number, done: number): void {
    const start = Math.max(submitted, this.lastDone);
    this.totals(phase).gpuSeconds += Math.max(0, done - start) / 1000;
    this.lastDone = done;
  }

  /** A dispatch of `phase` took `seconds` on the GPU (by its timestamps). */
  kernelTime(phase: string, seconds: number): void {
    this.totals(phase).gpuSeconds += Math.max(0, seconds);
  }

  /** Closes the current interval so the totals are up to date. */
  flush(): void {
    this.tick();
  }
}

/** A phase as Profile.dispatchPhase names it, split: the phase without its kernel, and the kernel (null if none). */
export function phaseKernel(name: string): { phase: string; kernel: string | null } {
  const m = / \[([^\]]+)\]$/.exec(name);
  return m ? { phase: name.slice(0, m.index), kernel: m[1]! } : { phase: name, kernel: null };
}
