// The body of matmul_subgroup_n4.wgsl (B from storage) and matmul_subgroup_n4_uniform.wgsl (B through uniform
// windows): C[b] = alpha * A[b] @ B[b] (+ C[b] when ACCUMULATE), A stored [M, K], B stored [K, N]. The includer
// declares B's bindings and three functions: `windowOf(k) -> u32`, the window holding B's rows k .. k + 3,
// `windowStart(win) -> u32`, its first row, and `loadB(win, i) -> vec4f`, vec4 word i of that window.
#include "lib/matmul_vec4_io.wgsl"
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
    // B's window of rows 4 k4 .. 4 k4 + 3 (uniform: a window holds whole groups of 4 rows).
    let win = windowOf(4u * k4);
    let start = windowStart(win);
    for (var kk = 0u; kk < 4u; kk++) {
      var bv: array<vec4f, 2>;
      for (var j = 0u; j < COL_GROUPS; j++) { bv[j] = loadB(win, offB[j] + (4u * k4 + kk - start) * N4); }
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
