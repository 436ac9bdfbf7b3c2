enable subgroups;
// C[b] = alpha * op(A[b]) @ op(B[b]) (+ C[b] when ACCUMULATE), f32, row-major, with the layout conventions of
// matmul.wgsl; for CPU drivers that run a subgroup of 8 invocations as the 8 SIMD lanes of one CPU thread
// (llvmpipe on AVX2), where a load with a different address in each lane (a gather) is the dear part and
// arithmetic across lanes is cheap. A workgroup is one subgroup of 8 lanes and owns a 8 x 16 block of C:
// per k, lane l loads op(A)[r0 + l][k] and op(B)[k][c0 + l], op(B)[k][c0 + 8 + l] (3 gathers) and gets the
// 8 values of A's column from its neighbours by subgroupBroadcast, for 16 multiply-adds per lane (the
// scalar `regs` kernel: 8 loads for 16). Any M, N, K and either transpose; the host uses it only where the
// subgroup size is exactly 8 (src/gpu/ops/matmul.ts).
#include "lib/matmul_io.wgsl"

@compute @workgroup_size(8, 1, 1)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  let r0 = wid.y * 8u;
  let c0 = wid.x * 16u;
  let b = wid.z;
  let baseA = b * p.strideA;
  let baseB = b * p.strideB;
  // Clamped so the loop has no edge branches; results outside C are dropped at store.
  let ra = min(r0 + lane, p.M - 1u);
  let cb0 = min(c0 + lane, p.N - 1u);
  let cb1 = min(c0 + 8u + lane, p.N - 1u);
  // acc0[i], acc1[i]: C[r0 + i][c0 + lane] and C[r0 + i][c0 + 8 + lane].
  var acc0: array<f32, 8>;
  var acc1: array<f32, 8>;
  for (var k = 0u; k < p.K; k++) {
    var av: f32;
    var b0: f32;
    var b1: f32;
    if (TRANS_A) { av = A[baseA + k * p.M + ra]; } else { av = A[baseA + ra * p.K + k]; }
    if (TRANS_B) {
      b0 = readB(baseB + cb0 * p.K + k);
      b1 = readB(baseB + cb1 * p.K + k);
    } else {
      b0 = readB(baseB + k * p.N + cb0);
      b1 = readB(baseB + k * p.N + cb1);
    }
    let a0 = subgroupBroadcast(av, 0u);
    let a1 = subgroupBroadcast(av, 1u);
    let a2 = subgroupBroadcast(av, 2u);
    let a3 = subgroupBroadcast(av, 3u);
    let a4 = subgroupBroadcast(av, 4u);
    let a5 = subgroupBroadcast(av, 5u);
    let a6 = subgroupBroadcast(av, 6u);
    let a7 = subgroupBroadcast(av, 7u);
    acc0[0] += a0 * b0; acc1[0] += a0 * b1;
    acc0[1] += a1 * b0; acc1[1] += a1 * b1;
    acc0[2] += a2 * b0; acc1[2] += a2 * b1;
    acc0[3] += a3 * b0; acc1[3] += a3 * b1;
    acc0[4] += a4 * b0; acc1[4] += a4 * b1;
    acc0[5] += a5 * b0; acc1[5] += a5 * b1;
    acc0[6] += a6 * b0; acc1[6] += a6 * b1;
    acc0[7] += a7 * b0; acc1[7] += a7 * b1;
  }
  let baseC = b * p.strideC;
  for (var i = 0u; i < 8u; i++) {
    store(baseC, r0 + i, c0 + lane, acc0[i]);
    store(baseC, r0 + i, c0 + 8u + lane, acc1[i]);
  }
}
