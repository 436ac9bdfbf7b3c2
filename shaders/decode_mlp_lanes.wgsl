enable subgroups;
// A decoder layer's half after the attention, for one decoding step of a small model on a CPU driver, in one
// workgroup per TR rows: o_proj plus the residual, the post-attention RMSNorm, gate/up and SwiGLU, down_proj plus
// the residual, with LoRA on any projection. decode_matvec_lanes.wgsl runs the same tiles
// (lib/matvec_lanes_tiles.wgsl) one per workgroup, three dispatches; on lavapipe a dispatch's fixed cost (lavapipe's
// threads woken and waited for, its barrier: 45-80 µs) outweighed the products of a layer 96 wide, and here the
// workgroup walks every column tile itself, a storage barrier between the stages (the same lanes write and read x
// and y), the rows normed once for gate/up into workgroup memory (per column tile, the norm's loads matched the
// weights'). The grid spreads only rows, so the host takes this kernel only where a layer's weights are few
// (src/model/decode-step.ts).
//
// The weights are read as uniform buffers, each matrix through two windows of at most 64 KiB (rows [0, split) of
// the matrix, then rows [split, N); split a multiple of the 32 columns of a tile, so a tile reads one window): on
// llvmpipe a uniform load of a lane is a masked load without branches, a storage load one with a bounds check and
// a branch per word and lane, and gate/up's tile took 2.1-2.8x as long from storage (bench/NOTES.md, round 20).
// Same numbers as decode_matvec_lanes: the same tiles, sums in the same order.
#include "lib/packed16.wgsl"
#include "lib/weights8.wgsl"
#include "lib/subgroup8.wgsl"
override WG: u32;          // lanes: 8, the subgroup
override R: u32 = 1u;      // LoRA rank (1 without adapters), at most 8 RG
override W_FORMAT: u32 = FORMAT_F32;
override TR: u32 = 8u;     // rows per workgroup: 1, 2, 4 or 8
override HN: u32;          // TR * D / 4: the normed rows' vec4 words

// Each window's vec4 words, set by the host (DispatchSpec.source): o_proj's, gate's and up's, down's.
const O0_WORDS = 1u;
const O1_WORDS = 1u;
const GU0_WORDS = 1u;
const GU1_WORDS = 1u;
const D0_WORDS = 1u;
const D1_WORDS = 1u;

struct Params {
  rows: u32, n: u32,
  A: u32,    // the attention's output width (o_proj's row length)
  D: u32,    // the hidden size
  I: u32,    // the MLP's width
  eps: f32,
  oSplit: u32, guSplit: u32, dSplit: u32, // each matrix's rows in its first window
  normAt: u32, // the post-attention norm's weights in the state
  loraO: u32, loraGate: u32, loraUp: u32, loraDown: u32, // LoRA adapters in the state, or NONE
  loraScale: f32,
}
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> inp: array<vec4f>;             // the attention's output [n, A]
@group(0) @binding(2) var<storage, read> state: array<u32>;
@group(0) @binding(3) var<storage, read_write> x: array<vec4f>;         // the rows' hidden states [n, D]
@group(0) @binding(4) var<storage, read_write> y: array<f32>;           // the MLP's activations [n, I]
@group(0) @binding(5) var<uniform> wo0: array<vec4<u32>, O0_WORDS>;
@group(0) @binding(6) var<uniform> wo1: array<vec4<u32>, O1_WORDS>;
@group(0) @binding(7) var<uniform> wg0: array<vec4<u32>, GU0_WORDS>;
@group(0) @binding(8) var<uniform> wg1: array<vec4<u32>, GU1_WORDS>;
@group(0) @binding(9) var<uniform> wu0: array<vec4<u32>, GU0_WORDS>;
@group(0) @binding(10) var<uniform> wu1: array<vec4<u32>, GU1_WORDS>;
@group(0) @binding(11) var<uniform> wd0: array<vec4<u32>, D0_WORDS>;
@group(0) @binding(12) var<uniform> wd1: array<vec4<u32>, D1_WORDS>;
#include "lib/decode_rows.wgsl"
#include "lib/matvec_lanes_tiles.wgsl"

// Matrices (weightsOf's m) and the inputs of the residual products (inputOf's src).
const O = 0u;
const GATE = 1u;
const UP = 2u;
const DOWN = 3u;
const SRC_ATTN = 0u; // the attention's output
const SRC_ACT = 1u;  // the MLP's activations

/** The tile's rows after the post-attention norm (row t of the tile from hn[t * D / 4]), made once for gate/up. */
var<workgroup> hn: array<vec4f, HN>;

/** Lane t < TR norms row t of the tile into hn. */
fn normRows(r0: u32, lane: u32) {
  if (lane >= TR) { return; }
  let b = rowOf(r0, lane);
  let s = rowScale(lane, b, p.D);
  for (var g = 0u; g < p.D / 8u; g++) {
    let h = normed8(lane, b, s, g, p.D, p.normAt);
    hn[(lane * p.D) / 4u + 2u * g] = h.lo;
    hn[(lane * p.D) / 4u + 2u * g + 1u] = h.hi;
  }
}

/** Word of the g-th 8 weights of row r of a window whose rows have K elements. */
fn wordOf(r: u32, g: u32, K: u32) -> u32 { return (r * (K / 8u) + g) * WORDS8; }

/**
 * The window of the matrices the workgroup's tile reads: 0 before a matrix's split, 1 after. main sets it before
 * each tile (uniform in the workgroup, so only one window's loads run); one loop over a stage's tiles, not one a
 * window, keeps one copy of the tile's code (two took lavapipe 2.5x as long to build).
 */
var<private> tileWindow: u32;

/**
 * The g-th 8 weights of column c (clamped to N) of matrix m (a constant of each call): row c of the matrix, in its
 * first window or, past the split, its second.
 */
fn weightsOf(m: u32, c: u32, g: u32, K: u32, N: u32) -> Eight {
  let last = WORDS8 - 1u;
  let row = min(c, N - 1u);
  switch (m) {
    case O: {
      if (tileWindow == 0u) { let i = wordOf(row, g, K); return unpack8(wo0[i], wo0[i + last]); }
      let i = wordOf(row - p.oSplit, g, K);
      return unpack8(wo1[i], wo1[i + last]);
    }
    case GATE: {
      if (tileWindow == 0u) { let i = wordOf(row, g, K); return unpack8(wg0[i], wg0[i + last]); }
      let i = wordOf(row - p.guSplit, g, K);
      return unpack8(wg1[i], wg1[i + last]);
    }
    case UP: {
      if (tileWindow == 0u) { let i = wordOf(row, g, K); return unpack8(wu0[i], wu0[i + last]); }
      let i = wordOf(row - p.guSplit, g, K);
      return unpack8(wu1[i], wu1[i + last]);
    }
    default: {
      if (tileWindow == 0u) { let i = wordOf(row, g, K); return unpack8(wd0[i], wd0[i + last]); }
      let i = wordOf(row - p.dSplit, g, K);
      return unpack8(wd1[i], wd1[i + last]);
    }
  }
}

/** Elements 8g .. 8g + 7 of row b of the attention's output or the activations (src); zeros past TR. */
fn inputOf(src: u32, lane: u32, b: u32, g: u32, K: u32) -> Eight {
  if (lane >= TR) { return Eight(vec4f(0.0), vec4f(0.0)); }
  if (src == SRC_ATTN) {
    let i = (b * K) / 4u + 2u * g;
    return Eight(inp[i], inp[i + 1u]);
  }
  let i = b * K + 8u * g;
  return Eight(vec4f(y[i], y[i + 1u], y[i + 2u], y[i + 3u]), vec4f(y[i + 4u], y[i + 5u], y[i + 6u], y[i + 7u]));
}

/** Elements 8g .. 8g + 7 of the lane's row (b) after the post-attention norm, from hn; zeros past TR. */
fn normedOf(lane: u32, b: u32, g: u32, K: u32) -> Eight {
  if (lane >= TR) { return Eight(vec4f(0.0), vec4f(0.0)); }
  return Eight(hn[(lane * K) / 4u + 2u * g], hn[(lane * K) / 4u + 2u * g + 1u]);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  let r0 = wid.x * TR;
  if (!anyLive(r0)) { return; }
  for (var c0 = 0u; c0 < p.D; c0 += TILE_COLS) {
    tileWindow = select(0u, 1u, c0 >= p.oSplit);
    residualTile(O, SRC_ATTN, p.loraO, p.A, p.D, r0, c0, lane);
  }
  storageBarrier();
  normRows(r0, lane);
  workgroupBarrier();
  for (var c0 = 0u; c0 < p.I; c0 += TILE_COLS) {
    tileWindow = select(0u, 1u, c0 >= p.guSplit);
    gatedTile(GATE, UP, p.loraGate, p.loraUp, p.D, p.I, r0, c0, lane);
  }
  storageBarrier();
  for (var c0 = 0u; c0 < p.D; c0 += TILE_COLS) {
    tileWindow = select(0u, 1u, c0 >= p.dSplit);
    residualTile(DOWN, SRC_ACT, p.loraDown, p.I, p.D, r0, c0, lane);
  }
}
