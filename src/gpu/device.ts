// The GPU device: acquiring an adapter and a device with the limits piplay's kernels need (or a clear error
// naming the missing limit), what the engine reports about it (`EngineInfo`), and its health: uncaptured
// errors and device loss, turned into errors at the next dispatch or read.
import type { GpuHost } from './host/types.ts';

export class GpuUnavailableError extends Error {
  override name = 'GpuUnavailableError';
}
export class GpuLimitError extends Error {
  override name = 'GpuLimitError';
}
export class GpuRuntimeError extends Error {
  override name = 'GpuRuntimeError';
}

export interface EngineInfo {
  host: string;
  vendor: string;
  architecture: string;
  description: string;
  /** A software rasteriser (lavapipe, SwiftShader): kernels pick CPU-friendly variants. */
  isCpu: boolean;
  f16: boolean;
  subgroups: boolean;
  /** The adapter's subgroup sizes (0 when unknown or without subgroups). */
  subgroupMinSize: number;
  subgroupMaxSize: number;
  timestamps: boolean;
  limits: {
    maxStorageBufferBindingSize: number;
    maxBufferSize: number;
    maxStorageBuffersPerShaderStage: number;
    maxComputeWorkgroupStorageSize: number;
    maxComputeInvocationsPerWorkgroup: number;
    maxComputeWorkgroupsPerDimension: number;
    /** For windows of tensors read as uniform buffers (BufferWindow). */
    maxUniformBufferBindingSize: number;
    minUniformBufferOffsetAlignment: number;
    maxUniformBuffersPerShaderStage: number;
  };
}

/** Limits the kernels are written against; an adapter below these cannot run piplay. */
const REQUIRED = {
  maxStorageBuffersPerShaderStage: 8,
  maxComputeInvocationsPerWorkgroup: 256,
  maxComputeWorkgroupSizeX: 256,
  maxComputeWorkgroupStorageSize: 16384,
};

export interface DeviceOptions {
  powerPreference?: GPUPowerPreference;
  /** Use f16 storage where the device has `shader-f16` (default true). */
  allowF16?: boolean;
  /**
   * Caps the largest storage binding below the adapter's (tests: runs the paths that split tensors larger
   * than a binding, e.g. the vocabulary shards, at tiny sizes; or a large GPU acting as a browser's 128 MiB).
   */
  maxBindingBytes?: number;
  /**
   * Runs what a GPU in a browser would get on any adapter: every kernel's GPU variant (not the CPU driver's) and
   * WebGPU's default limits instead of the adapter's (default: the environment variable PIPLAY_FORCE_GPU_PATHS=1),
   * so that tests on a CPU driver keep the GPU paths right.
   */
  forceGpuPaths?: boolean;
}

/** WebGPU's default limits (the spec's): what a browser grants a page that asks for nothing more. */
const DEFAULT_LIMITS: Record<string, number> = {
  maxStorageBufferBindingSize: 128 * 2 ** 20,
  maxBufferSize: 256 * 2 ** 20,
  maxStorageBuffersPerShaderStage: 8,
  maxComputeWorkgroupStorageSize: 16384,
  maxComputeInvocationsPerWorkgroup: 256,
  maxComputeWorkgroupSizeX: 256,
  maxComputeWorkgroupSizeY: 256,
  maxComputeWorkgroupsPerDimension: 65535,
};

/** PIPLAY_FORCE_GPU_PATHS=1 in the environment (Node; a browser has none). */
function forcedByEnvironment(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.['PIPLAY_FORCE_GPU_PATHS'] === '1';
}

/** Collects a device's uncaptured errors and its loss, and throws them where the engine next looks. */
export class DeviceHealth {
  private errors: string[] = [];
  private lostReason: string | null = null;

  constructor(device: GPUDevice) {
    const onError = (ev: Event) => {
      const err = (ev as GPUUncapturedErrorEvent).error;
      this.errors.push(err?.message ?? String(ev));
    };
    device.addEventListener?.('uncapturederror', onError);
    void device.lost.then((info) => {
      this.lostReason = `${info.reason}: ${info.message}`;
    });
  }

  /** Throws when the device was lost (before recording more work). */
  assertNotLost(): void {
    if (this.lostReason) {
      throw new GpuRuntimeError(
        `piplay: the GPU device was lost (${this.lostReason}); reload or resume from a checkpoint.`,
      );
    }
  }

  /** Throws when the device was lost or reported errors since the last check. */
  throwIfFailed(): void {
    if (this.lostReason) throw new GpuRuntimeError(`piplay: the GPU device was lost (${this.lostReason}).`);
    if (this.errors.length > 0) {
      const errs = this.errors.splice(0);
      throw new GpuRuntimeError(
        `piplay: GPU error: ${errs[0]}${errs.length > 1 ? ` (and ${errs.length - 1} more)` : ''}`,
      );
    }
  }
}

/** Acquires an adapter and a device with the limits piplay needs, or throws a clear error. */
export async function openDevice(
  host: GpuHost,
  opts: DeviceOptions = {},
): Promise<{ device: GPUDevice; info: EngineInfo }> {
  if (!host.gpu)
    throw new GpuUnavailableError(`piplay: WebGPU is not available (${host.name}). ${host.missingGpuHelp}`);
  const adapter = await host.gpu.requestAdapter({ powerPreference: opts.powerPreference ?? 'high-performance' });
  if (!adapter) throw new GpuUnavailableError(`piplay: no WebGPU adapter (${host.name}). ${host.missingGpuHelp}`);
  const al = adapter.limits;
  for (const [name, min] of Object.entries(REQUIRED)) {
    const have = al[name as keyof GPUSupportedLimits] as number;
    if (have < min) {
      throw new GpuLimitError(
        `piplay: this GPU adapter (${adapter.info.description || adapter.info.vendor}) has ${name} = ${have}, ` +
          `but piplay's kernels need at least ${min}. Try another browser or GPU.`,
      );
    }
  }
  const forceGpu = opts.forceGpuPaths ?? forcedByEnvironment();
  const adapterLimits: Record<string, number> = {
    maxStorageBufferBindingSize: al.maxStorageBufferBindingSize,
    maxBufferSize: al.maxBufferSize,
    maxStorageBuffersPerShaderStage: al.maxStorageBuffersPerShaderStage,
    maxComputeWorkgroupStorageSize: al.maxComputeWorkgroupStorageSize,
    maxComputeInvocationsPerWorkgroup: al.maxComputeInvocationsPerWorkgroup,
    maxComputeWorkgroupSizeX: al.maxComputeWorkgroupSizeX,
    maxComputeWorkgroupSizeY: al.maxComputeWorkgroupSizeY,
    maxComputeWorkgroupsPerDimension: al.maxComputeWorkgroupsPerDimension,
  };
  const requiredLimits = forceGpu ? DEFAULT_LIMITS : adapterLimits;
  const features: GPUFeatureName[] = [];
  const f16 = (opts.allowF16 ?? true) && adapter.features.has('shader-f16');
  if (f16) features.push('shader-f16');
  if (adapter.features.has('timestamp-query')) features.push('timestamp-query');
  const subgroups = adapter.features.has('subgroups');
  if (subgroups) features.push('subgroups' as GPUFeatureName);
  const device = await adapter.requestDevice({ requiredLimits, requiredFeatures: features, label: 'piplay' });
  const ai = adapter.info;
  const text = `${ai.vendor} ${ai.architecture} ${ai.device} ${ai.description}`.toLowerCase();
  const info: EngineInfo = {
    host: host.name,
    vendor: ai.vendor,
    architecture: ai.architecture,
    description: ai.description || ai.device,
    isCpu:
      !forceGpu &&
      (Boolean((ai as GPUAdapterInfo & { isFallbackAdapter?: boolean }).isFallbackAdapter) ||
        /llvmpipe|lavapipe|swiftshader|software/.test(text)),
    f16,
    subgroups,
    subgroupMinSize: subgroups ? ((ai as GPUAdapterInfo & { subgroupMinSize?: number }).subgroupMinSize ?? 0) : 0,
    subgroupMaxSize: subgroups ? ((ai as GPUAdapterInfo & { subgroupMaxSize?: number }).subgroupMaxSize ?? 0) : 0,
    timestamps: features.includes('timestamp-query'),
    limits: {
      maxStorageBufferBindingSize: Math.min(
        device.limits.maxStorageBufferBindingSize,
        opts.maxBindingBytes ?? Number.POSITIVE_INFINITY,
      ),
      maxBufferSize: device.limits.maxBufferSize,
      maxStorageBuffersPerShaderStage: device.limits.maxStorageBuffersPerShaderStage,
      maxComputeWorkgroupStorageSize: device.limits.maxComputeWorkgroupStorageSize,
      maxComputeInvocationsPerWorkgroup: device.limits.maxComputeInvocationsPerWorkgroup,
      maxComputeWorkgroupsPerDimension: device.limits.maxComputeWorkgroupsPerDimension,
      maxUniformBufferBindingSize: device.limits.maxUniformBufferBindingSize,
      minUniformBufferOffsetAlignment: device.limits.minUniformBufferOffsetAlignment,
      maxUniformBuffersPerShaderStage: device.limits.maxUniformBuffersPerShaderStage,
    },
  };
  return { device, info };
}
