// The browser host: navigator.gpu (in a page or a Worker), shaders bundled by Vite at build time.
import type { GpuHost } from './types.ts';

// Kernels and the helpers they `#include` (shaders/lib/), keyed like the Node host's file names:
// 'matmul', 'lib/online_lse'.
const modules = import.meta.glob(['../../../shaders/*.wgsl', '../../../shaders/lib/*.wgsl'], {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>;
const sources = new Map<string, string>();
for (const [path, text] of Object.entries(modules)) {
  const name = path.slice(path.lastIndexOf('/shaders/') + '/shaders/'.length).replace(/\.wgsl$/, '');
  sources.set(name, text);
}

export function browserHost(): GpuHost {
  const nav = (globalThis as { navigator?: Navigator }).navigator;
  return {
    name: 'browser',
    gpu: nav && 'gpu' in nav ? nav.gpu : null,
    shaderSource(name: string): string {
      const src = sources.get(name);
      if (src === undefined) throw new Error(`piplay: shader '${name}.wgsl' is not bundled`);
      return src;
    },
    missingGpuHelp:
      'This browser does not expose WebGPU. Use a recent Chrome or Edge (113+) on a machine with a ' +
      'supported GPU; on Linux enable chrome://flags/#enable-unsafe-webgpu and ' +
      'chrome://flags/#enable-vulkan, then reload. The page must be served over https or localhost.',
  };
}
