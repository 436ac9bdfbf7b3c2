// The matrix-vector products of a decoding step (one new token per row, few rows), weights read as stored
// [N, K] (x Wᵀ, the HF layout), f32 sums:
//   residual: x[b, c] += in[b, :] · W[c, :] (+ LoRA)                    o_proj and down_proj, with the residual
//   gated:    y[b, c] = silu(h · Wg[c, :]) · (h · Wu[c, :]) (+ LoRA each), h = RMSNorm(x[b, :])   gate/up, SwiGLU
//   head:     y[b, c] = h · W[c, :], h = RMSNorm(x[b, :])                   final norm and LM head (logits)
// One thread per output column, a workgroup per WG columns x TILE_ROWS rows: each weight element read serves
// TILE_ROWS rows. The normed rows sit in workgroup memory (XN = TILE_ROWS * K floats); LoRA's rank-wide
// products scale (h Aᵀ) are computed once per workgroup. Rows that stopped (lib/decode_rows.wgsl) are left
// alone. Same numbers as the unfused ops up to the order of f32 sums.
#include "lib/packed16.wgsl"
override WG: u32;
override TILE_ROWS: u32;  // rows per workgroup, 1..4
override XN: u32 = 1u;    // TILE_ROWS * K for gated and head (the normed rows), else 1
override R: u32 = 1u;     // LoRA rank (1 without adapters)
override W_FORMAT: u32 = FORMAT_F32;

struct Params { rows: u32, n: u32, K: u32, N: u32, eps: f32, normAt: u32, lora: u32, lora2: u32, loraScale: f32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> inp: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<u32>;
@group(0) @binding(3) var<storage, read> w2: array<u32>;
@group(0) @binding(4) var<storage, read> state: array<u32>;
@group(0) @binding(5) var<storage, read_write> x: array<f32>;
@group(0) @binding(6) var<storage, read_write> y: array<f32>;
#include "lib/decode_rows.wgsl"

var<workgroup> xn: array<f32, XN>;
var<workgroup> xa: array<f32, 8u * R>; // scale (h Aᵀ) per row of the tile, per adapter (two for gated)

fn weight1(i: u32) -> f32 { return packedValue(w[packedWord(i, W_FORMAT)], i, W_FORMAT); }
fn weight2(i: u32) -> f32 { return packedValue(w2[packedWord(i, W_FORMAT)], i, W_FORMAT); }

/** Whether row r0 + r is a live row of the call. */
fn live(r0: u32, r: u32) -> bool { return r < TILE_ROWS && r0 + r < p.n && !stoppedRow(r0 + r); }

/** Whether any row of the tile is live (uniform per workgroup). */
fn anyLive(r0: u32) -> bool {
  for (var r = 0u; r < TILE_ROWS; r++) { if (live(r0, r)) { return true; } }
  return false;
}

/** The tile's rows of x, RMS-normed with the weight at normAt, into xn. */
fn normRows(r0: u32, lid: u32) {
  for (var r = 0u; r < TILE_ROWS; r++) {
    let b = min(r0 + r, p.n - 1u); // rows past the end repeat the last one, never stored
    var ss = 0.0;
    for (var i = lid; i < p.K; i += WG) {
      let v = x[b * p.K + i];
      ss += v * v;
    }
    let rstd = 1.0 / sqrt(workgroupSum(lid, ss) / f32(p.K) + p.eps);
    for (var i = lid; i < p.K; i += WG) { xn[r * p.K + i] = x[b * p.K + i] * rstd * stateF(p.normAt + i); }
  }
  workgroupBarrier();
}

/** Row r of the tile's input: `inp` (residual), rows past the end repeating the last. */
fn inputRow(r0: u32, r: u32, i: u32) -> f32 { return inp[min(r0 + r, p.n - 1u) * p.K + i]; }

/** xa[(slot * TILE_ROWS + r) * R + k] = scale (normed row r · A[k]) for the adapter at `at` (A, then B). */
fn lowRankNormed(lid: u32, at: u32, slot: u32) {
  for (var t = lid; t < TILE_ROWS * R; t += WG) {
    var acc = 0.0;
    if (at != NONE) {
      let a = at + (t % R) * p.K;
      for (var i = 0u; i < p.K; i++) { acc += xn[(t / R) * p.K + i] * stateF(a + i); }
    }
    xa[slot * TILE_ROWS * R + t] = acc * p.loraScale;
  }
}

/** The same for the rows of `inp`. */
fn lowRankInput(r0: u32, lid: u32, at: u32) {
  for (var t = lid; t < TILE_ROWS * R; t += WG) {
    var acc = 0.0;
    if (at != NONE) {
      let a = at + (t % R) * p.K;
      for (var i = 0u; i < p.K; i++) { acc += inputRow(r0, t / R, i) * stateF(a + i); }
    }
    xa[t] = acc * p.loraScale;
  }
}

/** Adds the adapter at `at` to column c of each row: B[c, :] · xa. */
fn addLowRank(acc: ptr<function, array<f32, 4>>, at: u32, slot: u32, c: u32) {
  if (at == NONE) { return; }
  let bRow = at + R * p.K + c * R;
  for (var r = 0u; r < TILE_ROWS; r++) {
    var low = 0.0;
    for (var k = 0u; k < R; k++) { low += xa[(slot * TILE_ROWS + r) * R + k] * stateF(bRow + k); }
    (*acc)[r] += low;
  }
}

@compute @workgroup_size(WG)
fn residual(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r0 = wid.y * TILE_ROWS;
  if (!anyLive(r0)) { return; }
  lowRankInput(r0, lid, p.lora);
  workgroupBarrier();
  let c = wid.x * WG + lid;
  if (c >= p.N) { return; }
  var acc = array<f32, 4>(0.0, 0.0, 0.0, 0.0);
  for (var i = 0u; i < p.K; i++) {
    let wi = weight1(c * p.K + i);
    for (var r = 0u; r < TILE_ROWS; r++) { acc[r] += inputRow(r0, r, i) * wi; }
  }
  addLowRank(&acc, p.lora, 0u, c);
  for (var r = 0u; r < TILE_ROWS; r++) {
    if (live(r0, r)) { x[(r0 + r) * p.N + c] += acc[r]; }
  }
}

@compute @workgroup_size(WG)
fn gated(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r0 = wid.y * TILE_ROWS;
  if (!anyLive(r0)) { return; }
  normRows(r0, lid);
  lowRankNormed(lid, p.lora, 0u);
  lowRankNormed(lid, p.lora2, 1u);
  workgroupBarrier();
  let c = wid.x * WG + lid;
  if (c >= p.N) { return; }
  var g = array<f32, 4>(0.0, 0.0, 0.0, 0.0);
  var u = array<f32, 4>(0.0, 0.0, 0.0, 0.0);
  for (var i = 0u; i < p.K; i++) {
    let wg = weight1(c * p.K + i);
    let wu = weight2(c * p.K + i);
    for (var r = 0u; r < TILE_ROWS; r++) {
      let h = xn[r * p.K + i];
      g[r] += h * wg;
      u[r] += h * wu;
    }
  }
  addLowRank(&g, p.lora, 0u, c);
  addLowRank(&u, p.lora2, 1u, c);
  for (var r = 0u; r < TILE_ROWS; r++) {
    if (live(r0, r)) { y[(r0 + r) * p.N + c] = g[r] * (1.0 / (1.0 + exp(-g[r]))) * u[r]; }
  }
}

@compute @workgroup_size(WG)
fn head(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  // Every row gets logits (the sampler reads them all): zeros for a tile of stopped rows.
  let r0 = wid.y * TILE_ROWS;
  let c = wid.x * WG + lid;
  var acc = array<f32, 4>(0.0, 0.0, 0.0, 0.0);
  if (anyLive(r0)) {
    normRows(r0, lid);
    if (c < p.N) {
      for (var i = 0u; i < p.K; i++) {
        let wi = weight1(c * p.K + i);
        for (var r = 0u; r < TILE_ROWS; r++) { acc[r] += xn[r * p.K + i] * wi; }
      }
    }
  }
  if (c >= p.N) { return; }
  for (var r = 0u; r < TILE_ROWS; r++) {
    if (r0 + r < p.n) { y[(r0 + r) * p.N + c] = acc[r]; }
  }
}
