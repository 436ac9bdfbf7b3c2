// A stored run is driven by one tab at a time: a Web Lock per run (navigator.locks), taken when a run starts or
// resumes and held until it ends. The browser releases it when the tab closes or crashes, so a dead owner never
// blocks the run; a live one in another tab makes a resume (or a delete) refused with what to do. Where there is
// no Web Locks API (Node, an old browser) a set in this worker stands in.

/** The part of the Web Locks API used here (a LockManager). */
export interface Locks {
  request(name: string, opts: { ifAvailable: true }, cb: (lock: unknown) => Promise<void>): Promise<void>;
  query(): Promise<{ held?: { name?: string }[] }>;
}

export interface RunLock {
  release(): void;
}

const key = (run: string) => `piplay-run:${run}`;

/** Locks held in this worker where the browser has no Web Locks. */
const local = new Set<string>();

function browserLocks(): Locks | null {
  const l = (globalThis as { navigator?: { locks?: Locks } }).navigator?.locks;
  return l && typeof l.request === 'function' ? l : null;
}

/** Takes run `name`'s lock, or null when another tab (or job) holds it. */
export async function lockRun(name: string, locks: Locks | null = browserLocks()): Promise<RunLock | null> {
  if (!locks) {
    if (local.has(name)) return null;
    local.add(name);
    return { release: () => local.delete(name) };
  }
  return new Promise<RunLock | null>((resolve, reject) => {
    locks
      .request(key(name), { ifAvailable: true }, (lock) => {
        if (!lock) {
          resolve(null);
          return Promise.resolve();
        }
        // Held until release(): the callback's promise is the lock's life.
        return new Promise<void>((release) => resolve({ release: () => release() }));
      })
      .catch(reject);
  });
}

/** Whether some tab holds run `name`'s lock (drives it now). */
export async function runLocked(name: string, locks: Locks | null = browserLocks()): Promise<boolean> {
  if (!locks) return local.has(name);
  const { held = [] } = await locks.query();
  return held.some((l) => l.name === key(name));
}

export const lockedMessage = (name: string) =>
  `run '${name}' is open in another tab of this browser, which drives it now: stop it there (or close that tab), ` +
  'then try again';
