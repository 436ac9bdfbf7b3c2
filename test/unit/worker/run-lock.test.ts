// One tab drives a stored run: the run's Web Lock is taken on start or resume and held until released; a second
// taker (another tab) gets null, a dead owner's lock (released by the browser) is free again; delete asks whether
// any tab holds it. A LockManager with the Web Locks semantics stands in for the browser's (one per origin).
import { describe, expect, it } from 'vitest';
import { lockedMessage, lockRun, runLocked, type Locks } from '../../../src/worker/run-lock.ts';

/** navigator.locks as the spec has it for exclusive ifAvailable requests: held while the callback's promise runs. */
function lockManager(): Locks & { crash(name: string): void } {
  const held = new Map<string, () => void>();
  return {
    async request(name, _opts, cb) {
      if (held.has(name)) return cb(null);
      let drop!: () => void;
      const gone = new Promise<void>((r) => (drop = r));
      held.set(name, drop);
      await Promise.race([cb({ name }), gone]);
      held.delete(name);
    },
    async query() {
      return { held: [...held.keys()].map((name) => ({ name })) };
    },
    crash(name) {
      held.get(name)?.(); // the browser releases a closed tab's locks
    },
  };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('run locks', () => {
  it('lets one tab hold a run; another is refused until it is released', async () => {
    const locks = lockManager();
    const a = await lockRun('r1', locks);
    expect(a).not.toBeNull();
    expect(await lockRun('r1', locks)).toBeNull();
    expect(await runLocked('r1', locks)).toBe(true);
    expect(await lockRun('r2', locks)).not.toBeNull(); // per run
    a!.release();
    await tick();
    expect(await runLocked('r1', locks)).toBe(false);
    expect(await lockRun('r1', locks)).not.toBeNull();
  });

  it('frees the run of a tab that closed or crashed', async () => {
    const locks = lockManager();
    await lockRun('r1', locks);
    locks.crash('piplay-run:r1');
    await tick();
    expect(await lockRun('r1', locks)).not.toBeNull();
  });

  it('stands in with a set in this worker where there are no Web Locks', async () => {
    const a = await lockRun('solo', null);
    expect(await lockRun('solo', null)).toBeNull();
    expect(await runLocked('solo', null)).toBe(true);
    a!.release();
    expect(await runLocked('solo', null)).toBe(false);
    expect(lockedMessage('solo')).toMatch(/open in another tab .* stop it there \(or close that tab\)/);
  });
});
