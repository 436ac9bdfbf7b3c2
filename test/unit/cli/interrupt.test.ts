// stopOnInterrupt: the SIGINTs of one Ctrl-C (the terminal's, and what npm or tsx pass on, within
// milliseconds) ask for the graceful stop once; a Ctrl-C more than a second later quits at once.
import { describe, expect, it, vi } from 'vitest';
import { stopOnInterrupt } from '../../../src/cli/interrupt.ts';

describe('stopOnInterrupt', () => {
  it('counts signals within the grace time as one Ctrl-C, and quits on a later one', () => {
    vi.useFakeTimers();
    let t = 1000;
    const exit = vi.fn();
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
    const listeners = process.listenerCount('SIGINT');
    const i = stopOnInterrupt({ now: () => t, exit });
    try {
      expect(i.signal.aborted).toBe(false);
      process.emit('SIGINT');
      expect(i.signal.aborted).toBe(true);
      t += 5;
      process.emit('SIGINT');
      t += 300;
      process.emit('SIGINT');
      expect(exit).not.toHaveBeenCalled();
      t += 1000;
      process.emit('SIGINT');
      expect(exit).toHaveBeenCalledWith(130);
    } finally {
      i.release();
      vi.advanceTimersByTime(1000); // the grace after the stop
      vi.useRealTimers();
      quiet.mockRestore();
    }
    expect(process.listenerCount('SIGINT')).toBe(listeners);
  });

  it('ignores the rest of a Ctrl-C that arrives after the run stopped, while it saves', () => {
    vi.useFakeTimers();
    let t = 1000;
    const exit = vi.fn();
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
    const listeners = process.listenerCount('SIGINT');
    const i = stopOnInterrupt({ now: () => t, exit });
    try {
      process.emit('SIGINT');
      t += 1500; // the event loop was busy: the same Ctrl-C's second signal comes after the run stopped
      i.release();
      process.emit('SIGINT');
      expect(exit).not.toHaveBeenCalled();
      expect(process.listenerCount('SIGINT')).toBe(listeners + 1); // not the default action, which kills
      vi.advanceTimersByTime(1000);
      expect(process.listenerCount('SIGINT')).toBe(listeners);
    } finally {
      quiet.mockRestore();
      vi.useRealTimers();
    }
  });
});
