// The page: starts the engine worker and reports what the GPU is; the panels mount under #app.
import { startEngineWorker } from './engine-client.ts';

const status = document.getElementById('gpu-status')!;
const app = document.getElementById('app')!;

function showError(title: string, message: string): void {
  status.textContent = title;
  status.className = 'status error';
  const box = document.createElement('section');
  box.className = 'panel error-panel';
  box.setAttribute('role', 'alert');
  box.innerHTML = `<h2></h2><p></p>`;
  box.querySelector('h2')!.textContent = title;
  box.querySelector('p')!.textContent = message;
  app.prepend(box);
}

async function boot(): Promise<void> {
  if (!('gpu' in navigator)) {
    showError(
      'WebGPU is not available',
      'This browser does not expose WebGPU (navigator.gpu). Use a recent Chrome or Edge (113+); on Linux enable ' +
        'chrome://flags/#enable-unsafe-webgpu and chrome://flags/#enable-vulkan, then reload. The page must be ' +
        'served over https or from localhost.',
    );
    return;
  }
  const engine = startEngineWorker();
  const init = await engine.init();
  if (!init.ok || !init.info) {
    showError('WebGPU is not usable', init.error ?? 'unknown error');
    return;
  }
  const info = init.info;
  status.textContent = `${info.description || info.vendor}${info.isCpu ? ' (software)' : ''}${info.f16 ? ' · f16' : ''}`;
  status.className = 'status ok';
  const test = await engine.selfTest(64);
  status.title = `self-test matmul 64³: max error ${test.maxError.toExponential(1)}, ${test.ms.toFixed(1)} ms`;
  status.dataset.selftest = test.maxError < 1e-3 ? 'pass' : 'fail';
}

boot().catch((err: unknown) => showError('piplay failed to start', (err as Error).message));
