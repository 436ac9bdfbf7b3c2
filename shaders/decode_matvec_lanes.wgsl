enable subgroups;
// decode_matvec's three products (residual, gated, head: the same bindings, params and numbers), shaped for a CPU
// driver: a workgroup computes one tile of TR rows x 32 columns (lib/matvec_lanes.wgsl and matvec_lanes_tiles.wgsl),
// the grid spreading the columns over the cores. decode_mlp_lanes.wgsl runs a small layer's whole MLP in one
// workgroup instead.
#include "lib/packed16.wgsl"
#include "lib/weights8.wgsl"
#include "lib/subgroup8.wgsl"
override WG: u32;          // lanes: 8, the subgroup
override R: u32 = 1u;      // LoRA rank (1 without adapters), at most 8 RG
override W_FORMAT: u32 = FORMAT_F32;
override TR: u32 = 8u;     // rows per workgroup: 1, 2, 4 or 8

struct Params { rows: u32, n: u32, K: u32, N: u32, eps: f32, normAt: u32, lora: u32, lora2: u32, loraScale: f32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> inp: array<vec4f>;
@group(0) @binding(2) var<storage, read> w: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> w2: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> state: array<u32>;
@group(0) @binding(5) var<storage, read_write> x: array<vec4f>;
@group(0) @binding(6) var<storage, read_write> y: array<f32>;
#include "lib/decode_rows.wgsl"
#include "lib/matvec_lanes_tiles.wgsl"

/**
 * The g-th 8 weights of column c (clamped to N) of w (m 0) or w2 (m 1). Every entry reaches both bindings through
 * the shared tiles, so the host binds w again as w2 where an entry has one matrix (read-only bindings may alias).
 */
fn weightsOf(m: u32, c: u32, g: u32, K: u32, N: u32) -> Eight {
  let i = (min(c, N - 1u) * (K / 8u) + g) * WORDS8;
  if (m == 0u) { return unpack8(w[i], w[i + WORDS8 - 1u]); }
  return unpack8(w2[i], w2[i + WORDS8 - 1u]);
}

/** Elements 8g .. 8g + 7 of input row b (zeros on a lane past the tile's rows); one input here. */
fn inputOf(src: u32, lane: u32, b: u32, g: u32, K: u32) -> Eight {
  if (lane >= TR) { return Eight(vec4f(0.0), vec4f(0.0)); }
  let i = (b * K) / 4u + 2u * g;
  return Eight(inp[i], inp[i + 1u]);
}

/** The lane's row's 1 / rms (gated sets it). */
var<private> normScale: f32;

/** Elements 8g .. 8g + 7 of RMSNorm(x)[b], the norm at p.normAt. */
fn normedOf(lane: u32, b: u32, g: u32, K: u32) -> Eight { return normed8(lane, b, normScale, g, K, p.normAt); }

@compute @workgroup_size(WG)
fn residual(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  let r0 = wid.y * TR;
  if (!anyLive(r0)) { return; }
  residualTile(0u, 0u, p.lora, p.K, p.N, r0, wid.x * TILE_COLS, lane);
}

@compute @workgroup_size(WG)
fn gated(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  let r0 = wid.y * TR;
  if (!anyLive(r0)) { return; }
  normScale = rowScale(lane, rowOf(r0, lane), p.K);
  gatedTile(0u, 1u, p.lora, p.lora2, p.K, p.N, r0, wid.x * TILE_COLS, lane);
}

@compute @workgroup_size(WG)
fn head(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  headTile(0u, wid.y * TR, wid.x * TILE_COLS, lane, p.K, p.N, p.normAt);
}
