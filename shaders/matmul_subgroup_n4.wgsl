enable subgroups;
// C[b] = alpha * A[b] @ B[b] (+ C[b] when ACCUMULATE), f32, neither operand transposed: A stored [M, K], B stored
// [K, N] (a linear layer's input gradient dy @ w), K and N multiples of 4. A subgroup of 8 lanes owns a
// (8 * ROW_GROUPS) x (32 * COL_GROUPS) block of C: lane l owns columns c0 + 32j + 4l .. + 3 of column group j and
// loads them as one vec4 of B's row k; it loads row r0 + 8t + l of A (row group t) 4 k at a time as vec4, and the
// rows go round by subgroupBroadcast. Per 4 k: ROW_GROUPS + 4 * COL_GROUPS vec4 loads for
// 128 * ROW_GROUPS * COL_GROUPS multiply-adds per lane, as shaders/matmul_subgroup_k4.wgsl (on llvmpipe a vec4 load
// shares one lane's checks over its 4 elements; bench/NOTES.md). The host uses it only for that case, with f32
// operands (src/gpu/ops/matmul.ts).
#include "lib/matmul_vec4_io.wgsl"
@group(0) @binding(2) var<storage, read> B: array<vec4f>;
#include "lib/matmul_store4.wgsl"
#include "lib/subgroup8.wgsl"

override COL_GROUPS: u32 = 2u;

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  let r0 = wid.y * 8u * ROW_GROUPS;
  let c0 = wid.x * 8u * COL_GROUPS; // in vec4s of columns
  let b = wid.z;
  let K4 = p.K / 4u;
  let N4 = p.N / 4u;
  var offA = rowsOfA(b, r0, lane);
  // vec4 offsets of this lane's columns of B in row 0, clamped as A's rows are.
  var offB: array<u32, 2>;
  for (var j = 0u; j < COL_GROUPS; j++) {
    offB[j] = (b * p.strideB) / 4u + min(c0 + 8u * j + lane, N4 - 1u);
  }
  // acc[8t + i][j]: C[r0 + 8t + i][4 * (c0 + 8j + lane) ..  + 3].
  var acc: array<array<vec4f, 2>, 16>;
  for (var k4 = 0u; k4 < K4; k4++) {
    var av: array<vec4f, 2>;
    for (var t = 0u; t < ROW_GROUPS; t++) { av[t] = A[offA[t] + k4]; }
    for (var kk = 0u; kk < 4u; kk++) {
      var bv: array<vec4f, 2>;
      for (var j = 0u; j < COL_GROUPS; j++) { bv[j] = B[offB[j] + (4u * k4 + kk) * N4]; }
      for (var t = 0u; t < ROW_GROUPS; t++) {
        let a = lanes8(av[t][kk]);
        for (var i = 0u; i < 8u; i++) {
          for (var j = 0u; j < COL_GROUPS; j++) { acc[8u * t + i][j] += a[i] * bv[j]; }
        }
      }
    }
  }
  let baseC = (b * p.strideC) / 4u;
  for (var t = 0u; t < ROW_GROUPS; t++) {
    for (var i = 0u; i < 8u; i++) {
      for (var j = 0u; j < COL_GROUPS; j++) { store4(baseC, r0 + 8u * t + i, c0 + 8u * j + lane, acc[8u * t + i][j]); }
    }
  }
}
