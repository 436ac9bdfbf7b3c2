// Pause, resume, stop and "save now" for a run in the worker. The loop calls `gate()` between steps:
// it resolves at once while running, waits while paused, and throws RunStopped once stop() was called.

export class RunStopped extends Error {
  override name = 'RunStopped';
  constructor() {
    super('the run was stopped');
  }
}

export class RunControl {
  private pausedFlag = false;
  private stoppedFlag = false;
  private saveFlag = false;
  private wake: (() => void)[] = [];
  private abort = new AbortController();

  get paused(): boolean {
    return this.pausedFlag;
  }
  get stopped(): boolean {
    return this.stoppedFlag;
  }
  /** Aborted on stop (for loops that take an AbortSignal). */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  pause(): void {
    if (!this.stoppedFlag) this.pausedFlag = true;
  }

  resume(): void {
    this.pausedFlag = false;
    this.release();
  }

  stop(): void {
    this.stoppedFlag = true;
    this.pausedFlag = false;
    this.abort.abort(new RunStopped());
    this.release();
  }

  /** Asks the loop to save a checkpoint at its next step boundary. */
  requestSave(): void {
    this.saveFlag = true;
  }

  /** True once per request (the loop saves when it reads true). */
  takeSaveRequest(): boolean {
    const s = this.saveFlag;
    this.saveFlag = false;
    return s;
  }

  async gate(): Promise<void> {
    while (this.pausedFlag && !this.stoppedFlag) await new Promise<void>((r) => this.wake.push(r));
    if (this.stoppedFlag) throw new RunStopped();
  }

  private release(): void {
    const w = this.wake.splice(0);
    for (const r of w) r();
  }
}
