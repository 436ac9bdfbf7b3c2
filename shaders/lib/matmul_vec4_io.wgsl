// The interface of the matmul kernels that read f32 operands 4 elements at a time (shaders/matmul_subgroup_k4.wgsl,
// matmul_subgroup_n4.wgsl, matmul_subgroup_tn4.wgsl): the parameters and operand bindings of lib/matmul_io.wgsl
// with A as vec4 (each kernel binds B as vec4 words of storage or uniform windows, and C as its stores want it).
// Offsets and strides in Params count elements, as there.
override ACCUMULATE: bool = false;
override ROW_GROUPS: u32 = 2u;

struct Params { M: u32, N: u32, K: u32, strideA: u32, strideB: u32, strideC: u32, alpha: f32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> A: array<vec4f>;

/**
 * vec4 offsets at k = 0 of rows r0 + 8t + lane (row group t < ROW_GROUPS <= 2) of A[b] stored [M, K], K % 4 == 0;
 * clamped to row M - 1 so the k loop has no edge branches (results outside C are dropped at store).
 */
fn rowsOfA(b: u32, r0: u32, lane: u32) -> array<u32, 2> {
  var off: array<u32, 2>;
  for (var t = 0u; t < ROW_GROUPS; t++) {
    off[t] = (b * p.strideA) / 4u + min(r0 + 8u * t + lane, p.M - 1u) * (p.K / 4u);
  }
  return off;
}
