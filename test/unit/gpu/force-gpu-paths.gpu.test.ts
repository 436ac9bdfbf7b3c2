// PIPLAY_FORCE_GPU_PATHS (DeviceOptions.forceGpuPaths): on a CPU driver the engine takes what a GPU in a browser
// gets, every kernel's GPU variant and WebGPU's default limits, so the kernel tests and fixtures run those paths.
import { describe, expect, it } from 'vitest';
import { Engine } from '../../../src/gpu/engine.ts';
import { nodeHost } from '../../../src/gpu/host/node.ts';

describe('forced GPU paths', () => {
  it('give a non-CPU engine at WebGPU default limits', async () => {
    const forced = await Engine.create(nodeHost(), { forceGpuPaths: true });
    expect(forced.info.isCpu).toBe(false);
    expect(forced.info.limits.maxStorageBufferBindingSize).toBe(128 * 2 ** 20);
    expect(forced.info.limits.maxStorageBuffersPerShaderStage).toBe(8);
    expect(forced.info.limits.maxComputeInvocationsPerWorkgroup).toBe(256);
    forced.destroy();
    const plain = await Engine.create(nodeHost(), { forceGpuPaths: false });
    // This suite runs on a CPU driver (lavapipe) unless a GPU is present.
    if (/llvmpipe|lavapipe|swiftshader/i.test(`${plain.info.architecture} ${plain.info.description}`))
      expect(plain.info.isCpu).toBe(true);
    plain.destroy();
  });
});
