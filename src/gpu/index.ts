// The engine's public surface: what model, rl and selfplay code import.
export { Engine, GpuUnavailableError, GpuLimitError, GpuRuntimeError, f, i } from './engine.ts';
export type { EngineInfo, EngineOptions, DispatchSpec, Param } from './engine.ts';
export { Tensor, numel, shapeString } from './tensor.ts';
export type { DType, HostArray } from './tensor.ts';
export type { GpuHost } from './host/types.ts';
export * from './ops/elementwise.ts';
export * from './ops/matmul.ts';
