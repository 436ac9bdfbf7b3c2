// C bound as vec4 for the matmul kernels whose lanes own 4 adjacent columns (N a multiple of 4:
// shaders/matmul_subgroup_n4.wgsl, matmul_subgroup_tn4.wgsl), and its edge-guarded store. Needs
// lib/matmul_vec4_io.wgsl (p, ACCUMULATE).
@group(0) @binding(3) var<storage, read_write> C: array<vec4f>;

/** C[b][r][4 * c4 .. + 3] = alpha * v (+= with ACCUMULATE), base4 = b's offset in vec4s; outside C, nothing. */
fn store4(base4: u32, r: u32, c4: u32, v: vec4f) {
  let N4 = p.N / 4u;
  if (r >= p.M || c4 >= N4) { return; }
  let idx = base4 + r * N4 + c4;
  if (ACCUMULATE) { C[idx] += p.alpha * v; } else { C[idx] = p.alpha * v; }
}
