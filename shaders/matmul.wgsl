// C[b] = alpha * op(A[b]) @ op(B[b]) (+ C[b] when ACCUMULATE), f32, row-major.
//   op(A) is [M, K]: A stored [M, K], or [K, M] when TRANS_A (a transpose read in place, never copied).
//   op(B) is [K, N]: B stored [K, N], or [N, K] when TRANS_B (so linear layers read nn.Linear weights as-is).
// Batch b = workgroup z; strides in elements (0 broadcasts one matrix over the batch).
//
// Two entry points over the same bindings:
//   regs  - register blocking only: each thread owns a 4x4 block of C and streams A and B from memory.
//           Best on CPU drivers (lavapipe, SwiftShader), where workgroup memory is slow.
//   tiled - 64x64 block per workgroup, 16-wide K slabs staged in workgroup memory, 4x4 per thread.
//           Best on real GPUs.
// Both guard every edge, so any M, N, K works. B is read through readB (lib/matmul_io.wgsl): f32, f16 or bf16.
#include "lib/matmul_io.wgsl"

@compute @workgroup_size(8, 8, 1)
fn regs(@builtin(global_invocation_id) gid: vec3u) {
  let r0 = gid.y * 4u;
  let c0 = gid.x * 4u;
  if (r0 >= p.M || c0 >= p.N) { return; }
  let b = gid.z;
  let baseA = b * p.strideA;
  let baseB = b * p.strideB;
  // Clamp the rows/cols this thread reads so the inner loop has no edge branches; extra lanes are dropped at store.
  var ra: array<u32, 4>;
  var cb: array<u32, 4>;
  for (var i = 0u; i < 4u; i++) {
    ra[i] = min(r0 + i, p.M - 1u);
    cb[i] = min(c0 + i, p.N - 1u);
  }
  var acc: array<vec4f, 4>;
  for (var k = 0u; k < p.K; k++) {
    var bv: vec4f;
    if (TRANS_B) {
      bv = vec4f(readB(baseB + cb[0] * p.K + k), readB(baseB + cb[1] * p.K + k),
                 readB(baseB + cb[2] * p.K + k), readB(baseB + cb[3] * p.K + k));
    } else {
      let row = baseB + k * p.N;
      bv = vec4f(readB(row + cb[0]), readB(row + cb[1]), readB(row + cb[2]), readB(row + cb[3]));
    }
    for (var i = 0u; i < 4u; i++) {
      var av: f32;
      if (TRANS_A) { av = A[baseA + k * p.M + ra[i]]; } else { av = A[baseA + ra[i] * p.K + k]; }
      acc[i] += av * bv;
    }
  }
  let baseC = b * p.strideC;
  for (var i = 0u; i < 4u; i++) {
    for (var j = 0u; j < 4u; j++) { store(baseC, r0 + i, c0 + j, acc[i][j]); }
  }
}

const TILE = 64u;
const KS = 16u;
var<workgroup> tileA: array<array<f32, 64>, 16>; // [k][row]
var<workgroup> tileB: array<array<f32, 64>, 16>; // [k][col]

@compute @workgroup_size(16, 16, 1)
fn tiled(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let rowBase = wid.y * TILE;
  let colBase = wid.x * TILE;
  let b = wid.z;
  let baseA = b * p.strideA;
  let baseB = b * p.strideB;
  let t = lid.y * 16u + lid.x;
  var acc: array<vec4f, 4>;
  for (var k0 = 0u; k0 < p.K; k0 += KS) {
    // 256 threads stage a 64x16 slab of A and a 16x64 slab of B: 4 elements each.
    for (var e = 0u; e < 4u; e++) {
      let idx = t + e * 256u;
      let kk = idx / TILE;
      let rr = idx % TILE;
      tileA[kk][rr] = loadA(baseA, rowBase + rr, k0 + kk);
      tileB[kk][rr] = loadB(baseB, k0 + kk, colBase + rr);
    }
    workgroupBarrier();
    for (var kk = 0u; kk < KS; kk++) {
      let bv = vec4f(tileB[kk][lid.x * 4u], tileB[kk][lid.x * 4u + 1u], tileB[kk][lid.x * 4u + 2u], tileB[kk][lid.x * 4u + 3u]);
      for (var i = 0u; i < 4u; i++) { acc[i] += tileA[kk][lid.y * 4u + i] * bv; }
    }
    workgroupBarrier();
  }
  let baseC = b * p.strideC;
  for (var i = 0u; i < 4u; i++) {
    for (var j = 0u; j < 4u; j++) { store(baseC, rowBase + lid.y * 4u + i, colBase + lid.x * 4u + j, acc[i][j]); }
  }
}
