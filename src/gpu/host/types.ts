/** What a host (a browser worker or Node with Dawn) gives the engine: WebGPU itself and the WGSL sources. */
export interface GpuHost {
  /** The `GPU` object (navigator.gpu in a browser, npm `webgpu`'s `create()` in Node), or null if absent. */
  gpu: GPU | null;
  /** Returns the text of `shaders/<name>.wgsl` (`name` may be `lib/<helper>`); the engine expands its includes. */
  shaderSource(name: string): string;
  /** A short name for messages: "browser" or "node". */
  name: string;
  /** What to tell the user when `gpu` is null or no adapter is found. */
  missingGpuHelp: string;
  /**
   * Waits for a promise of the GPU's (a map, the queue's completion); a host may change how it polls meanwhile.
   * `cpuDriver`: the device runs on the CPU (lavapipe, SwiftShader), whose work needs every core the host has.
   */
  waitFor?<T>(p: Promise<T>, cpuDriver: boolean): Promise<T>;
}
