// The interface every matmul kernel shares (shaders/matmul.wgsl, shaders/matmul_subgroup.wgsl): the layout
// constants, the parameters and bindings the host sets (src/gpu/ops/matmul.ts), and edge-guarded element
// access to op(A), op(B) and C, so each kernel states only how it blocks the product.
override TRANS_A: bool = false;
override TRANS_B: bool = false;
override ACCUMULATE: bool = false;

struct Params { M: u32, N: u32, K: u32, strideA: u32, strideB: u32, strideC: u32, alpha: f32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> A: array<f32>;
@group(0) @binding(2) var<storage, read> B: array<f32>;
@group(0) @binding(3) var<storage, read_write> C: array<f32>;

fn loadA(base: u32, r: u32, k: u32) -> f32 {
  if (r >= p.M || k >= p.K) { return 0.0; }
  if (TRANS_A) { return A[base + k * p.M + r]; }
  return A[base + r * p.K + k];
}

fn loadB(base: u32, k: u32, c: u32) -> f32 {
  if (k >= p.K || c >= p.N) { return 0.0; }
  if (TRANS_B) { return B[base + c * p.K + k]; }
  return B[base + k * p.N + c];
}

fn store(base: u32, r: u32, c: u32, v: f32) {
  if (r >= p.M || c >= p.N) { return; }
  let idx = base + r * p.N + c;
  if (ACCUMULATE) { C[idx] += p.alpha * v; } else { C[idx] = p.alpha * v; }
}
