enable subgroups;
// The LM head of a decoding step on a CPU driver (decode_matvec_lanes.wgsl's `head`: lib/matvec_lanes.wgsl's tile,
// a workgroup per TR rows x 32 columns), its weights read through uniform windows (lib/windows8.wgsl) of a multiple
// of the tile's columns, so a workgroup reads one window. The host takes it for a small vocabulary (the embedded
// model's 1,024 x 96: 7 windows).
#include "lib/packed16.wgsl"
#include "lib/weights8.wgsl"
#include "lib/subgroup8.wgsl"
override WG: u32;          // lanes: 8, the subgroup
override W_FORMAT: u32 = FORMAT_F32;
override TR: u32 = 8u;     // rows per workgroup: 1, 2, 4 or 8

struct Params { rows: u32, n: u32, K: u32, N: u32, eps: f32, normAt: u32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> state: array<u32>;
@group(0) @binding(3) var<storage, read> x: array<vec4f>;      // the rows' hidden states [n, K]
@group(0) @binding(11) var<storage, read_write> y: array<f32>; // the logits [n, N]
#include "lib/windows8.wgsl"
#include "lib/decode_rows.wgsl"
#include "lib/matvec_lanes.wgsl"

/** The g-th 8 weights of column c (clamped to N), a row of window m. */
fn weightsOf(m: u32, c: u32, g: u32, K: u32, N: u32) -> Eight {
  let i = ((min(c, N - 1u) - windowStart(m)) * (K / 8u) + g) * WORDS8;
  let w = windowWords(m, i, i + WORDS8 - 1u);
  return unpack8(w[0], w[1]);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  let c0 = wid.x * TILE_COLS;
  headTile(c0 / PER_WINDOW, wid.y * TR, c0, lane, p.K, p.N, p.normAt);
}
