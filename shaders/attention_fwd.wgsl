// Fused causal attention, forward (flash-attention style), with grouped-query heads and a KV cache.
//
//   q [B, Hq, Tq, Dh]; k, v [B, Hkv, cap, Dh] of which the first Tk time steps are valid; o like q.
//   Query i sits at absolute position off + i and sees keys j with keyStart[b] <= j <= off + i, j < Tk, and,
//   with a prefix-tree mask, off + i < keyEnd[b, j] (lib/attention_key_mask.wgsl).
//   Query head h reads kv head h / G (G = Hq / Hkv). Scores are scale * q.k; a row with no visible key
//   gets o = 0.
//   stats [B, Hq, Tq, 2]: slot 0 receives the row's log-sum-exp of its scores (0 for an empty row), which
//   the backward uses to recompute probabilities; slot 1 is left for the backward (it writes D there).
//
// Work layout (queryRow in lib/attention_tiled.wgsl): workgroup (x, y, z) = (block of WG / nc rows, kv
// head, batch). The rows of a kv head are its G * Tq (group head, query) pairs, so the query heads that share
// a kv head share its K/V tiles (decoding with GQA fills a workgroup with the group's heads). nc threads own
// one row, each holding a cv-vec4 chunk of q and of the output accumulator; the nc partial dot products of a
// score meet in workgroup memory. Keys stream through workgroup memory in blocks of bk with an online softmax
// (running max m and running sum l, rescaling the accumulator when m grows), so no [Tq, Tk] matrix is ever
// stored.
//
// Layout constants: on GPUs the op compiles one pipeline per layout with FIXED = true, so loops have
// constant trip counts (unrolled, per-thread arrays in registers). CPU drivers (lavapipe) take minutes to
// JIT those unrolled loops, so there one pipeline serves every shape: FIXED = false, the trip counts come
// from the uniform and the workgroup arrays keep their default (largest) sizes.
override BK: u32 = 16u; // bk when FIXED: keys per block
override TILE: u32 = 384u; // vec4s in a K or V tile: >= bk * nc * cv
override PART: u32 = 1024u; // partial-score slots: >= WG * bk

const NEG = -3.0e38; // "minus infinity" that stays finite, so exp(NEG - m) is 0 and never NaN

@group(0) @binding(5) var<storage, read_write> o: array<f32>;
@group(0) @binding(6) var<storage, read_write> stats: array<f32>;

var<workgroup> ta: array<vec4f, TILE>; // K rows: [key][head-dim vec4], zero padded to nc * cv vec4s
var<workgroup> tb: array<vec4f, TILE>; // V rows, likewise
var<workgroup> part: array<f32, PART>; // [row][chunk][key] partial scores

#include "lib/attention_tiled.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let nc = nChunks();
  let cv = nVec4();
  let bk = blockLen();
  let vecsPerRow = nc * cv;
  let qr = queryRow(wid, lid, nc);
  let keys = workgroupKeys(wid, nc);

  // This thread's chunk of q, pre-scaled, and of the output accumulator.
  var qv: array<vec4f, MAXV>;
  var acc: array<vec4f, MAXV>;
  for (var c = 0u; c < cv; c++) {
    if (qr.live) { qv[c] = p.scale * ldq(qr.qBase, (qr.ch * cv + c) * 4u); }
  }
  var m = NEG;
  var l = 0.0;

  for (var kb = keys.first; kb < keys.end; kb = nextBlock(wid, keys, kb, bk)) {
    stageKV(lid, kb, qr.kvBase, vecsPerRow, bk);

    // Partial scores over this thread's chunk.
    if (qr.live) {
      for (var j = 0u; j < bk; j++) {
        var s = 0.0;
        for (var c = 0u; c < cv; c++) { s += dot(qv[c], ta[j * vecsPerRow + qr.ch * cv + c]); }
        part[qr.mine * bk + j] = s;
      }
    }
    if (nc > 1u) { workgroupBarrier(); }

    if (qr.live) {
      // Full scores: every thread of the row sums the partials in the same order, so all agree.
      var mb = m;
      for (var j = 0u; j < bk; j++) {
        if (kb + j >= qr.rowEnd) { break; }
        if (!seesKey(wid.z, qr, kb + j)) { continue; }
        var s = 0.0;
        for (var c = 0u; c < nc; c++) { s += part[(qr.rl * nc + c) * bk + j]; }
        mb = max(mb, s);
      }
      if (mb > m) {
        // A larger maximum: rescale what was accumulated against the old one.
        let alpha = exp(m - mb);
        l *= alpha;
        for (var c = 0u; c < cv; c++) { acc[c] *= alpha; }
        m = mb;
      }
      for (var j = 0u; j < bk; j++) {
        if (kb + j >= qr.rowEnd) { break; }
        if (!seesKey(wid.z, qr, kb + j)) { continue; }
        var s = 0.0;
        for (var c = 0u; c < nc; c++) { s += part[(qr.rl * nc + c) * bk + j]; }
        let pj = exp(s - m);
        l += pj;
        for (var c = 0u; c < cv; c++) { acc[c] += pj * tb[j * vecsPerRow + qr.ch * cv + c]; }
      }
    }
    workgroupBarrier(); // the tiles are overwritten next block
  }

  if (!qr.live) { return; }
  var inv = 0.0;
  if (l > 0.0) { inv = 1.0 / l; }
  for (var c = 0u; c < cv; c++) {
    let d = (qr.ch * cv + c) * 4u;
    for (var x = 0u; x < 4u; x++) {
      if (d + x < p.Dh) { o[qr.qBase + d + x] = acc[c][x] * inv; }
    }
  }
  if (qr.ch == 0u) { stats[2u * qr.row] = select(0.0, m + log(l), l > 0.0); }
}
