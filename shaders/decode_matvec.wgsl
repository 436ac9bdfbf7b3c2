// The matrix-vector products of a decoding step (one new token per row, few rows), weights read as stored
// [N, K] (x Wᵀ, the HF layout), f32 sums:
//   residual: x[b, c] += in[b, :] · W[c, :] (+ LoRA)                    o_proj and down_proj, with the residual
//   gated:    y[b, c] = silu(h · Wg[c, :]) · (h · Wu[c, :]) (+ LoRA each), h = RMSNorm(x[b, :])   gate/up, SwiGLU
//   head:     y[b, c] = h · W[c, :], h = RMSNorm(x[b, :])                   final norm and LM head (logits)
// A workgroup computes COLS columns of TILE_ROWS rows (COLS / 2 columns of gate and of up for gated): its WG
// threads split K, so neighbouring threads read neighbouring weights (coalesced on a GPU, one vector load on a
// CPU driver), each weight read serves TILE_ROWS rows, and a tree in workgroup memory sums the threads' parts.
// Rows are RMS-normed on the fly (1 / rms per row first). LoRA's rank-wide products scale (h Aᵀ) are computed
// once per workgroup. Rows that stopped (lib/decode_rows.wgsl) are left alone. Same numbers as the unfused ops
// up to the order of f32 sums.
#include "lib/packed16.wgsl"
override WG: u32;          // threads, a power of two
override TILE_ROWS: u32;   // rows per workgroup, 1..4
override R: u32 = 1u;      // LoRA rank (1 without adapters)
override W_FORMAT: u32 = FORMAT_F32;
const COLS = 8u;           // columns per workgroup (4 of gate and 4 of up for gated)
const PARTS = 32u;         // COLS * 4 rows: each thread's partial sums

struct Params { rows: u32, n: u32, K: u32, N: u32, eps: f32, normAt: u32, lora: u32, lora2: u32, loraScale: f32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> inp: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<u32>;
@group(0) @binding(3) var<storage, read> w2: array<u32>;
@group(0) @binding(4) var<storage, read> state: array<u32>;
@group(0) @binding(5) var<storage, read_write> x: array<f32>;
@group(0) @binding(6) var<storage, read_write> y: array<f32>;
#include "lib/decode_rows.wgsl"

var<workgroup> parts: array<f32, PARTS * WG>; // parts[k * WG + thread]
var<workgroup> rowScale: array<f32, 4>;       // 1 / rms of each row of the tile
var<workgroup> xa: array<f32, 8u * R>;        // scale (h Aᵀ) per row of the tile, per adapter (two for gated)

fn weight1(i: u32) -> f32 { return packedValue(w[packedWord(i, W_FORMAT)], i, W_FORMAT); }
fn weight2(i: u32) -> f32 { return packedValue(w2[packedWord(i, W_FORMAT)], i, W_FORMAT); }

/** The tile's row r (rows past the end repeat the last one, never stored). */
fn rowOf(r0: u32, r: u32) -> u32 { return min(r0 + r, p.n - 1u); }

/** Whether row r0 + r is a live row of the call. */
fn live(r0: u32, r: u32) -> bool { return r < TILE_ROWS && r0 + r < p.n && !stoppedRow(r0 + r); }

/** Whether any row of the tile is live (uniform per workgroup). */
fn anyLive(r0: u32) -> bool {
  for (var r = 0u; r < TILE_ROWS; r++) { if (live(r0, r)) { return true; } }
  return false;
}

/** 1 / rms of each row of x in the tile, into rowScale. */
fn rowScales(r0: u32, lid: u32) {
  for (var r = 0u; r < TILE_ROWS; r++) {
    let b = rowOf(r0, r);
    var ss = 0.0;
    for (var i = lid; i < p.K; i += WG) {
      let v = x[b * p.K + i];
      ss += v * v;
    }
    let s = 1.0 / sqrt(reduceSum(lid, ss) / f32(p.K) + p.eps);
    if (lid == 0u) { rowScale[r] = s; }
  }
  workgroupBarrier();
}

/** Element i of the tile's normed row r. */
fn normed(r0: u32, r: u32, i: u32) -> f32 { return x[rowOf(r0, r) * p.K + i] * rowScale[r] * stateF(p.normAt + i); }

/** Element i of the tile's input row r (residual). */
fn input(r0: u32, r: u32, i: u32) -> f32 { return inp[rowOf(r0, r) * p.K + i]; }

/** xa[(slot * TILE_ROWS + r) * R + k] = scale (normed row r · A[k]) for the adapter at `at` (A, then B). */
fn lowRankNormed(r0: u32, lid: u32, at: u32, slot: u32) {
  for (var t = lid; t < TILE_ROWS * R; t += WG) {
    var acc = 0.0;
    if (at != NONE) {
      let a = at + (t % R) * p.K;
      for (var i = 0u; i < p.K; i++) { acc += normed(r0, t / R, i) * stateF(a + i); }
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
      for (var i = 0u; i < p.K; i++) { acc += input(r0, t / R, i) * stateF(a + i); }
    }
    xa[t] = acc * p.loraScale;
  }
}

/** B[c, :] · xa for row r of the tile, for the adapter at `at` (0 without one). */
fn lowRankOut(at: u32, slot: u32, c: u32, r: u32) -> f32 {
  if (at == NONE) { return 0.0; }
  var low = 0.0;
  for (var k = 0u; k < R; k++) { low += xa[(slot * TILE_ROWS + r) * R + k] * stateF(at + R * p.K + c * R + k); }
  return low;
}

/** Sums parts[k * WG + t] over the threads t into parts[k * WG], for every k. */
fn sumParts(lid: u32, acc: array<f32, PARTS>) {
  for (var k = 0u; k < PARTS; k++) { parts[k * WG + lid] = acc[k]; }
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) {
      for (var k = 0u; k < PARTS; k++) { parts[k * WG + lid] += parts[k * WG + lid + stride]; }
    }
    workgroupBarrier();
  }
}

@compute @workgroup_size(WG)
fn residual(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r0 = wid.y * TILE_ROWS;
  if (!anyLive(r0)) { return; }
  lowRankInput(r0, lid, p.lora);
  let c0 = wid.x * COLS;
  var acc: array<f32, PARTS>;
  for (var i = lid; i < p.K; i += WG) {
    var h: array<f32, 4>;
    for (var r = 0u; r < TILE_ROWS; r++) { h[r] = input(r0, r, i); }
    for (var cc = 0u; cc < COLS; cc++) {
      let wi = weight1(min(c0 + cc, p.N - 1u) * p.K + i);
      for (var r = 0u; r < TILE_ROWS; r++) { acc[cc * 4u + r] += h[r] * wi; }
    }
  }
  sumParts(lid, acc);
  if (lid < COLS * TILE_ROWS) {
    let cc = lid / TILE_ROWS;
    let r = lid % TILE_ROWS;
    let c = c0 + cc;
    if (c < p.N && live(r0, r)) {
      x[(r0 + r) * p.N + c] += parts[(cc * 4u + r) * WG] + lowRankOut(p.lora, 0u, c, r);
    }
  }
}

@compute @workgroup_size(WG)
fn gated(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  // Columns c0 .. c0 + COLS/2 of gate (parts 0..15) and of up (parts 16..31).
  let r0 = wid.y * TILE_ROWS;
  if (!anyLive(r0)) { return; }
  rowScales(r0, lid);
  lowRankNormed(r0, lid, p.lora, 0u);
  lowRankNormed(r0, lid, p.lora2, 1u);
  let half = COLS / 2u;
  let c0 = wid.x * half;
  var acc: array<f32, PARTS>;
  for (var i = lid; i < p.K; i += WG) {
    var h: array<f32, 4>;
    for (var r = 0u; r < TILE_ROWS; r++) { h[r] = normed(r0, r, i); }
    for (var cc = 0u; cc < half; cc++) {
      let at = min(c0 + cc, p.N - 1u) * p.K + i;
      let wg = weight1(at);
      let wu = weight2(at);
      for (var r = 0u; r < TILE_ROWS; r++) {
        acc[cc * 4u + r] += h[r] * wg;
        acc[(half + cc) * 4u + r] += h[r] * wu;
      }
    }
  }
  sumParts(lid, acc);
  if (lid < half * TILE_ROWS) {
    let cc = lid / TILE_ROWS;
    let r = lid % TILE_ROWS;
    let c = c0 + cc;
    if (c < p.N && live(r0, r)) {
      let g = parts[(cc * 4u + r) * WG] + lowRankOut(p.lora, 0u, c, r);
      let u = parts[((half + cc) * 4u + r) * WG] + lowRankOut(p.lora2, 1u, c, r);
      y[(r0 + r) * p.N + c] = g * (1.0 / (1.0 + exp(-g))) * u;
    }
  }
}

@compute @workgroup_size(WG)
fn head(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  // Every row gets logits (the sampler reads them all): zeros for a tile of stopped rows.
  let r0 = wid.y * TILE_ROWS;
  let c0 = wid.x * COLS;
  let on = anyLive(r0);
  if (on) {
    rowScales(r0, lid);
    var acc: array<f32, PARTS>;
    for (var i = lid; i < p.K; i += WG) {
      var h: array<f32, 4>;
      for (var r = 0u; r < TILE_ROWS; r++) { h[r] = normed(r0, r, i); }
      for (var cc = 0u; cc < COLS; cc++) {
        let wi = weight1(min(c0 + cc, p.N - 1u) * p.K + i);
        for (var r = 0u; r < TILE_ROWS; r++) { acc[cc * 4u + r] += h[r] * wi; }
      }
    }
    sumParts(lid, acc);
  }
  if (lid < COLS * TILE_ROWS) {
    let cc = lid / TILE_ROWS;
    let r = lid % TILE_ROWS;
    let c = c0 + cc;
    if (c < p.N && r0 + r < p.n) { y[(r0 + r) * p.N + c] = select(0.0, parts[(cc * 4u + r) * WG], on); }
  }
}
