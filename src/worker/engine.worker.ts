// The module worker that owns the GPU. The page talks to it through comlink (src/ui/engine-client.ts).
import * as Comlink from 'comlink';
import { browserHost } from '../gpu/host/browser.ts';
import { WorkerApi } from './api.ts';

Comlink.expose(new WorkerApi(browserHost()));
