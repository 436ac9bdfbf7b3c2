// Ctrl-C during a long command-line run: the first asks the run to stop after its current step (so it can
// checkpoint and be resumed), a second quits at once. A terminal's Ctrl-C sends SIGINT to the whole
// process group, and under `npm run` npm and tsx also pass it on to this process, so one key press arrives
// as two or three signals within milliseconds: those count as one. Only a SIGINT more than `graceMs` after
// the first (the user pressing Ctrl-C again) quits.
export function stopOnInterrupt(opts: { graceMs?: number; now?: () => number; exit?: (code: number) => void } = {}): {
  signal: AbortSignal;
  release: () => void;
} {
  const graceMs = opts.graceMs ?? 1000;
  const now = opts.now ?? Date.now;
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const abort = new AbortController();
  let first = 0;
  const onSigint = () => {
    if (abort.signal.aborted) {
      if (now() - first > graceMs) exit(130);
      return;
    }
    first = now();
    console.error('\nstopping after the current step (Ctrl-C again to quit at once)...');
    abort.abort();
  };
  process.on('SIGINT', onSigint);
  const release = () => {
    process.off('SIGINT', onSigint);
    if (!abort.signal.aborted) return;
    // The rest of the Ctrl-C that stopped the run may still be on its way (a busy event loop hands a signal over
    // late): with no listener it would kill the process while it saves its stop checkpoint. For the grace time
    // after the run has stopped it is ignored; a Ctrl-C after that still quits at once.
    const released = now();
    const late = () => {
      if (now() - released > graceMs) exit(130);
    };
    process.on('SIGINT', late);
    setTimeout(() => process.off('SIGINT', late), graceMs).unref();
  };
  return { signal: abort.signal, release };
}
