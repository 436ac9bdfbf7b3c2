enable subgroups;
// C[b] = alpha * A[b]ᵀ @ B[b] (+ C[b] when ACCUMULATE), f32: A stored [K, M], B stored [K, N] (a linear layer's
// weight gradient dyᵀ @ x), M and N multiples of 4. Both operands are contiguous along what a lane varies over:
// a subgroup of 8 lanes owns a 32 x (32 * COL_GROUPS) block of C; per k, lane l loads rows 4l .. 4l + 3 of the block
// as one vec4 of A's row k (the 32 rows go round by subgroupBroadcast) and its columns c0 + 32j + 4l .. + 3 as one
// vec4 of B's row k: 1 + COL_GROUPS vec4 loads for 128 * COL_GROUPS multiply-adds per lane (bench/NOTES.md). The
// host uses it only for that case, with f32 operands (src/gpu/ops/matmul.ts).
#include "lib/matmul_vec4_io.wgsl"
@group(0) @binding(2) var<storage, read> B: array<vec4f>;
#include "lib/matmul_store4.wgsl"
#include "lib/subgroup8.wgsl"

override COL_GROUPS: u32 = 1u;

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  let r0 = wid.y * 32u;
  let c0 = wid.x * 8u * COL_GROUPS; // in vec4s of columns
  let b = wid.z;
  let M4 = p.M / 4u;
  let N4 = p.N / 4u;
  // vec4 offsets in row 0 of this lane's rows of A and columns of B; clamped so the loop has no edge branches
  // (results outside C are dropped at store).
  let offA = (b * p.strideA) / 4u + min(r0 / 4u + lane, M4 - 1u);
  var offB: array<u32, 2>;
  for (var j = 0u; j < COL_GROUPS; j++) {
    offB[j] = (b * p.strideB) / 4u + min(c0 + 8u * j + lane, N4 - 1u);
  }
  // acc[4l + q][j]: C[r0 + 4l + q][4 * (c0 + 8j + lane) .. + 3], l the lane that loaded row 4l + q.
  var acc: array<array<vec4f, 2>, 32>;
  for (var k = 0u; k < p.K; k++) {
    let av = A[offA + k * M4];
    var bv: array<vec4f, 2>;
    for (var j = 0u; j < COL_GROUPS; j++) { bv[j] = B[offB[j] + k * N4]; }
    for (var q = 0u; q < 4u; q++) {
      let a = lanes8(av[q]);
      for (var l = 0u; l < 8u; l++) {
        for (var j = 0u; j < COL_GROUPS; j++) { acc[4u * l + q][j] += a[l] * bv[j]; }
      }
    }
  }
  let baseC = (b * p.strideC) / 4u;
  for (var i = 0u; i < 32u; i++) {
    for (var j = 0u; j < COL_GROUPS; j++) { store4(baseC, r0 + i, c0 + 8u * j + lane, acc[i][j]); }
  }
}
