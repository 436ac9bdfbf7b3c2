enable subgroups;
// The LM head of a decoding step on a CPU driver (decode_matvec_lanes.wgsl's `head`: lib/matvec_lanes.wgsl's tile,
// a workgroup per TR rows x 32 columns), its weights read through uniform windows: up to 8 of perWindow rows each,
// a multiple of the tile's columns, so a workgroup reads one window (chosen by a chain of ifs on a workgroup-uniform
// value, scalar branches on llvmpipe; a switch over 8 was slower: lib/matmul_b_windows.wgsl). On llvmpipe a lane's
// uniform load costs about half a storage load (decode_mlp_lanes.wgsl). The host takes it for a small vocabulary
// (the embedded model's 1,024 x 96: 7 windows).
#include "lib/packed16.wgsl"
#include "lib/weights8.wgsl"
#include "lib/subgroup8.wgsl"
override WG: u32;          // lanes: 8, the subgroup
override W_FORMAT: u32 = FORMAT_F32;
override TR: u32 = 8u;     // rows per workgroup: 1, 2, 4 or 8

// Each window's vec4 words, set by the host (DispatchSpec.source).
const H0_WORDS = 1u;
const H1_WORDS = 1u;
const H2_WORDS = 1u;
const H3_WORDS = 1u;
const H4_WORDS = 1u;
const H5_WORDS = 1u;
const H6_WORDS = 1u;
const H7_WORDS = 1u;

struct Params { rows: u32, n: u32, K: u32, N: u32, eps: f32, normAt: u32, perWindow: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> state: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<vec4f>;     // the rows' hidden states [n, K]
@group(0) @binding(3) var<storage, read_write> y: array<f32>; // the logits [n, N]
@group(0) @binding(4) var<uniform> h0: array<vec4<u32>, H0_WORDS>;
@group(0) @binding(5) var<uniform> h1: array<vec4<u32>, H1_WORDS>;
@group(0) @binding(6) var<uniform> h2: array<vec4<u32>, H2_WORDS>;
@group(0) @binding(7) var<uniform> h3: array<vec4<u32>, H3_WORDS>;
@group(0) @binding(8) var<uniform> h4: array<vec4<u32>, H4_WORDS>;
@group(0) @binding(9) var<uniform> h5: array<vec4<u32>, H5_WORDS>;
@group(0) @binding(10) var<uniform> h6: array<vec4<u32>, H6_WORDS>;
@group(0) @binding(11) var<uniform> h7: array<vec4<u32>, H7_WORDS>;
#include "lib/decode_rows.wgsl"
#include "lib/matvec_lanes.wgsl"

/** The g-th 8 weights of column c (clamped to N), a row of window m. */
fn weightsOf(m: u32, c: u32, g: u32, K: u32, N: u32) -> Eight {
  let i = ((min(c, N - 1u) - m * p.perWindow) * (K / 8u) + g) * WORDS8;
  let j = i + WORDS8 - 1u;
  if (m == 0u) { return unpack8(h0[i], h0[j]); }
  if (m == 1u) { return unpack8(h1[i], h1[j]); }
  if (m == 2u) { return unpack8(h2[i], h2[j]); }
  if (m == 3u) { return unpack8(h3[i], h3[j]); }
  if (m == 4u) { return unpack8(h4[i], h4[j]); }
  if (m == 5u) { return unpack8(h5[i], h5[j]); }
  if (m == 6u) { return unpack8(h6[i], h6[j]); }
  return unpack8(h7[i], h7[j]);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  let c0 = wid.x * TILE_COLS;
  headTile(c0 / p.perWindow, wid.y * TR, c0, lane, p.K, p.N, p.normAt);
}
