// The interface every matmul kernel shares (shaders/matmul.wgsl, shaders/matmul_subgroup.wgsl): the layout
// constants, the parameters and bindings the host sets (src/gpu/ops/matmul.ts), and edge-guarded element
// access to op(A), op(B) and C, so each kernel states only how it blocks the product.
// B may be stored as f32, f16 or bf16 (B_FORMAT, lib/packed16.wgsl): a frozen weight in its checkpoint's
// dtype; kernels read it through readB, which widens to f32, so products accumulate in f32.
#include "lib/packed16.wgsl"
override TRANS_A: bool = false;
override TRANS_B: bool = false;
override ACCUMULATE: bool = false;
override B_FORMAT: u32 = FORMAT_F32;

struct Params { M: u32, N: u32, K: u32, strideA: u32, strideB: u32, strideC: u32, alpha: f32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> A: array<f32>;
@group(0) @binding(2) var<storage, read> B: array<u32>;
@group(0) @binding(3) var<storage, read_write> C: array<f32>;

/** Element i of B's storage as f32. */
fn readB(i: u32) -> f32 {
  return packedValue(B[packedWord(i, B_FORMAT)], i, B_FORMAT);
}

fn loadA(base: u32, r: u32, k: u32) -> f32 {
  if (r >= p.M || k >= p.K) { return 0.0; }
  if (TRANS_A) { return A[base + k * p.M + r]; }
  return A[base + r * p.K + k];
}

fn loadB(base: u32, k: u32, c: u32) -> f32 {
  if (k >= p.K || c >= p.N) { return 0.0; }
  if (TRANS_B) { return readB(base + c * p.K + k); }
  return readB(base + k * p.N + c);
}

fn store(base: u32, r: u32, c: u32, v: f32) {
  if (r >= p.M || c >= p.N) { return; }
  let idx = base + r * p.N + c;
  if (ACCUMULATE) { C[idx] += p.alpha * v; } else { C[idx] = p.alpha * v; }
}
