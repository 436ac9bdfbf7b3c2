// A matmul's B (a small weight, one batch) through up to 8 uniform windows of PER_WINDOW rows each (the last may
// hold fewer), for matmul_subgroup_k4_uniform.wgsl and matmul_subgroup_n4_uniform.wgsl: on llvmpipe a lane's uniform
// load is a masked load without branches, a storage load a branch per word and lane (bench/NOTES.md, round 20). A
// window is chosen by a chain of ifs on a workgroup-uniform value, each a scalar branch: a WGSL switch over the 8
// took longer than the storage kernel (x @ wᵀ at M 512, N 96, K 96: 1.04 and 0.96 ms against 0.99 and 0.94 from
// storage, 0.77 and 0.70 with the chain).
override PER_WINDOW: u32;

// Each window's vec4 words, set by the host (DispatchSpec.source).
const B0_WORDS = 1u;
const B1_WORDS = 1u;
const B2_WORDS = 1u;
const B3_WORDS = 1u;
const B4_WORDS = 1u;
const B5_WORDS = 1u;
const B6_WORDS = 1u;
const B7_WORDS = 1u;
@group(0) @binding(2) var<uniform> B0: array<vec4f, B0_WORDS>;
@group(0) @binding(4) var<uniform> B1: array<vec4f, B1_WORDS>;
@group(0) @binding(5) var<uniform> B2: array<vec4f, B2_WORDS>;
@group(0) @binding(6) var<uniform> B3: array<vec4f, B3_WORDS>;
@group(0) @binding(7) var<uniform> B4: array<vec4f, B4_WORDS>;
@group(0) @binding(8) var<uniform> B5: array<vec4f, B5_WORDS>;
@group(0) @binding(9) var<uniform> B6: array<vec4f, B6_WORDS>;
@group(0) @binding(10) var<uniform> B7: array<vec4f, B7_WORDS>;

/** The first row of B in window win. */
fn windowStart(win: u32) -> u32 { return win * PER_WINDOW; }

/** vec4 word i of window win. */
fn loadB(win: u32, i: u32) -> vec4f {
  if (win == 0u) { return B0[i]; }
  if (win == 1u) { return B1[i]; }
  if (win == 2u) { return B2[i]; }
  if (win == 3u) { return B3[i]; }
  if (win == 4u) { return B4[i]; }
  if (win == 5u) { return B5[i]; }
  if (win == 6u) { return B6[i]; }
  return B7[i];
}
