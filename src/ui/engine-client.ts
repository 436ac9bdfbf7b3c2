// The page's handle on the engine worker.
import * as Comlink from 'comlink';
import type { WorkerApi } from '../worker/api.ts';

export function startEngineWorker(): Comlink.Remote<WorkerApi> {
  const worker = new Worker(new URL('../worker/engine.worker.ts', import.meta.url), {
    type: 'module',
    name: 'piplay-engine',
  });
  return Comlink.wrap<WorkerApi>(worker);
}
