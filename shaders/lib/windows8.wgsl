// Up to 8 uniform windows over a weight matrix's rows, PER_WINDOW rows each (the last may hold fewer;
// src/gpu/uniform-windows.ts), as vec4 words, bound at 2 and 4-10: matmul_subgroup_k4_uniform.wgsl,
// matmul_subgroup_n4_uniform.wgsl and decode_head_lanes.wgsl read a small model's weights through them. On llvmpipe a
// lane's uniform load is a masked load without branches, a storage load a branch per word and lane (bench/NOTES.md,
// round 20). A window is chosen by a chain of ifs on a workgroup-uniform value, each a scalar branch: a WGSL switch
// over the 8 took longer than reading from storage (x @ wᵀ at M 512, N 96, K 96: 1.04 and 0.96 ms against 0.99 and
// 0.94 from storage, 0.77 and 0.70 with the chain).
override PER_WINDOW: u32;

// Each window's vec4 words, set by the host (DispatchSpec.source).
const W0_WORDS = 1u;
const W1_WORDS = 1u;
const W2_WORDS = 1u;
const W3_WORDS = 1u;
const W4_WORDS = 1u;
const W5_WORDS = 1u;
const W6_WORDS = 1u;
const W7_WORDS = 1u;
@group(0) @binding(2) var<uniform> W0: array<vec4<u32>, W0_WORDS>;
@group(0) @binding(4) var<uniform> W1: array<vec4<u32>, W1_WORDS>;
@group(0) @binding(5) var<uniform> W2: array<vec4<u32>, W2_WORDS>;
@group(0) @binding(6) var<uniform> W3: array<vec4<u32>, W3_WORDS>;
@group(0) @binding(7) var<uniform> W4: array<vec4<u32>, W4_WORDS>;
@group(0) @binding(8) var<uniform> W5: array<vec4<u32>, W5_WORDS>;
@group(0) @binding(9) var<uniform> W6: array<vec4<u32>, W6_WORDS>;
@group(0) @binding(10) var<uniform> W7: array<vec4<u32>, W7_WORDS>;

/** The first row in window win. */
fn windowStart(win: u32) -> u32 { return win * PER_WINDOW; }

/** vec4 words i and j of window win (one chain of branches for both). */
fn windowWords(win: u32, i: u32, j: u32) -> array<vec4<u32>, 2> {
  if (win == 0u) { return array(W0[i], W0[j]); }
  if (win == 1u) { return array(W1[i], W1[j]); }
  if (win == 2u) { return array(W2[i], W2[j]); }
  if (win == 3u) { return array(W3[i], W3[j]); }
  if (win == 4u) { return array(W4[i], W4[j]); }
  if (win == 5u) { return array(W5[i], W5[j]); }
  if (win == 6u) { return array(W6[i], W6[j]); }
  return array(W7[i], W7[j]);
}

/** vec4 word i of window win. */
fn windowWord(win: u32, i: u32) -> vec4<u32> { return windowWords(win, i, i)[0]; }
