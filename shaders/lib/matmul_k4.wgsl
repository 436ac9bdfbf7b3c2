// The body of matmul_subgroup_k4.wgsl (B from storage) and matmul_subgroup_k4_uniform.wgsl (B through uniform
// windows): C[b] = alpha * A[b] @ B[b]ᵀ (+ C[b] when ACCUMULATE), A stored [M, K], B stored [N, K]. The includer
// declares B's bindings and three functions: `windowOf(c0) -> u32`, the window holding B's rows c0 .. c0 + 8
// COL_GROUPS - 1 (uniform in the workgroup), `windowStart(win) -> u32`, its first row, and `loadB(win, i) -> vec4f`,
// vec4 word i of that window.
#include "lib/matmul_vec4_io.wgsl"
#include "lib/subgroup8.wgsl"

override COL_GROUPS: u32 = 4u;

@group(0) @binding(3) var<storage, read_write> C: array<f32>;

fn store(base: u32, r: u32, c: u32, v: f32) {
  if (r >= p.M || c >= p.N) { return; }
  let idx = base + r * p.N + c;
  if (ACCUMULATE) { C[idx] += p.alpha * v; } else { C[idx] = p.alpha * v; }
}

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  let r0 = wid.y * 8u * ROW_GROUPS;
  let c0 = wid.x * 8u * COL_GROUPS;
  let b = wid.z;
  let K4 = p.K / 4u;
  var offA = rowsOfA(b, r0, lane);
  // vec4 offsets of this lane's rows of B at k = 0, clamped as A's rows are.
  let win = windowOf(c0);
  var offB: array<u32, 4>;
  for (var j = 0u; j < COL_GROUPS; j++) {
    offB[j] = (b * p.strideB) / 4u + (min(c0 + 8u * j + lane, p.N - 1u) - windowStart(win)) * K4;
  }
  // acc[8t + i][j]: C[r0 + 8t + i][c0 + 8j + lane].
  var acc: array<array<f32, 4>, 16>;
  for (var k4 = 0u; k4 < K4; k4++) {
    var bv: array<vec4f, 4>;
    for (var j = 0u; j < COL_GROUPS; j++) { bv[j] = loadB(win, offB[j] + k4); }
    for (var t = 0u; t < ROW_GROUPS; t++) {
      let av = A[offA[t] + k4];
      for (var kk = 0u; kk < 4u; kk++) {
        let a = lanes8(av[kk]);
        for (var i = 0u; i < 8u; i++) {
          for (var j = 0u; j < COL_GROUPS; j++) { acc[8u * t + i][j] += a[i] * bv[j][kk]; }
        }
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
