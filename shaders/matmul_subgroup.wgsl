enable subgroups;
// C[b] = alpha * op(A[b]) @ op(B[b]) (+ C[b] when ACCUMULATE), f32, row-major, with the layout conventions of
// matmul.wgsl; for CPU drivers that run a subgroup of 8 invocations as the 8 SIMD lanes of one CPU thread
// (llvmpipe on AVX2). There every storage load, whatever its address, is done lane by lane (8 scalar loads,
// each with its bounds check), while arithmetic on all 8 lanes is one instruction: what counts is
// multiply-adds per load. A workgroup is one subgroup of 8 lanes and owns a (8 * ROW_GROUPS) x (8 * COL_GROUPS)
// block of C: per k, lane l loads op(A)[r0 + 8t + l][k] for each row group t and op(B)[k][c0 + 8j + l] for
// each column group j, and gets the rows' values from its neighbours by subgroupBroadcast, for
// 8 * ROW_GROUPS * COL_GROUPS multiply-adds per lane over ROW_GROUPS + COL_GROUPS loads (16 x 32: 64 per 6).
// Accumulators beyond the 16 AVX2 registers spill to the stack, which costs far less than a load.
// Any M, N, K and either transpose; the host uses it only where the subgroup size is exactly 8
// (src/gpu/ops/matmul.ts) and picks ROW_GROUPS = 1 for products of at most 8 rows.
#include "lib/matmul_io.wgsl"
#include "lib/subgroup8.wgsl"

override ROW_GROUPS: u32 = 2u;
override COL_GROUPS: u32 = 4u;

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  let r0 = wid.y * 8u * ROW_GROUPS;
  let c0 = wid.x * 8u * COL_GROUPS;
  let b = wid.z;
  let baseA = b * p.strideA;
  let baseB = b * p.strideB;
  // Element offsets of this lane's rows of op(A) and columns of op(B) at k = 0, and their steps per k;
  // clamped so the loop has no edge branches (results outside C are dropped at store).
  var offA: array<u32, 2>;
  var offB: array<u32, 4>;
  for (var t = 0u; t < ROW_GROUPS; t++) {
    let r = min(r0 + 8u * t + lane, p.M - 1u);
    offA[t] = baseA + select(r * p.K, r, TRANS_A);
  }
  for (var j = 0u; j < COL_GROUPS; j++) {
    let c = min(c0 + 8u * j + lane, p.N - 1u);
    offB[j] = baseB + select(c, c * p.K, TRANS_B);
  }
  let stepA = select(1u, p.M, TRANS_A);
  let stepB = select(p.N, 1u, TRANS_B);
  // acc[8t + i][j]: C[r0 + 8t + i][c0 + 8j + lane].
  var acc: array<array<f32, 4>, 16>;
  for (var k = 0u; k < p.K; k++) {
    var bv: array<f32, 4>;
    for (var j = 0u; j < COL_GROUPS; j++) { bv[j] = readB(offB[j] + k * stepB); }
    for (var t = 0u; t < ROW_GROUPS; t++) {
      let a = lanes8(A[offA[t] + k * stepA]);
      for (var i = 0u; i < 8u; i++) {
        for (var j = 0u; j < COL_GROUPS; j++) { acc[8u * t + i][j] += a[i] * bv[j]; }
      }
    }
  }
  let baseC = b * p.strideC;
  for (var t = 0u; t < ROW_GROUPS; t++) {
    for (var i = 0u; i < 8u; i++) {
      for (var j = 0u; j < COL_GROUPS; j++) { store(baseC, r0 + 8u * t + i, c0 + 8u * j + lane, acc[8u * t + i][j]); }
    }
  }
}
