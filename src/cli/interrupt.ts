// Ctrl-C during a long command-line run: the first asks the run to stop after its current step (so it can
// checkpoint and be resumed), a second quits at once.
export function stopOnInterrupt(): { signal: AbortSignal; release: () => void } {
  const abort = new AbortController();
  const onSigint = () => {
    if (abort.signal.aborted) process.exit(130);
    console.error('\nstopping after the current step (Ctrl-C again to quit at once)...');
    abort.abort();
  };
  process.on('SIGINT', onSigint);
  return { signal: abort.signal, release: () => process.off('SIGINT', onSigint) };
}
