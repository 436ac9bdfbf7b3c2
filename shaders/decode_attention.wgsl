// The attention half of a decoder layer for one decoding step (one new token per row), in one kernel:
//   h = RMSNorm(x) (input_layernorm); q, k, v = h Wqᵀ, h Wkᵀ, h Wvᵀ (+ bias) (+ LoRA: scale (h Aᵀ) Bᵀ);
//   Qwen3's per-head RMSNorm of q and k; RoPE of q and k at the row's position; k and v appended to the
//   cache at time `len`; then causal attention of each query head over the row's keys keyStart..len:
//   o = softmax(scale q Kᵀ) V, written as o [B, Hq * DH] (heads in order), ready for o_proj.
// One workgroup per (kv head, row): it computes the GROUP query heads that share that kv head, and their k
// and v, so grouped-query heads read each cached key and value once per group and each cache slot has one
// writer. A block of WG keys is scored by WG threads (one exp per head and key), then each thread accumulates
// up to PAIRS (query head, dim) pairs of the output: four barriers per block, whatever the group size. Same numbers as the unfused ops (src/model/decoder.ts) up to
// the order of f32 sums. Matrices may be stored f32, f16 or bf16 (W_FORMAT); norms, biases and adapters
// come from the state buffer (lib/decode_rows.wgsl).
#include "lib/packed16.wgsl"
#include "lib/rope_turns.wgsl"
override WG: u32;       // threads, a power of two with GROUP * DH <= PAIRS * WG
override D: u32;        // hidden size
override DH: u32;       // head dim
override GROUP: u32;    // query heads per kv head
override R: u32 = 1u;   // LoRA rank (1 without adapters)
override W_FORMAT: u32 = FORMAT_F32;
const PAIRS = 4u;       // (query head, dim) pairs of the attention output per thread, at most

struct Params {
  rows: u32, Hkv: u32, cap: u32, len0: u32, eps: f32, scale: f32,
  freqAt: u32, normAt: u32, qNormAt: u32, kNormAt: u32, biasQ: u32, biasK: u32, biasV: u32,
  loraQ: u32, loraK: u32, loraV: u32, loraScale: f32,
}
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> wq: array<u32>;
@group(0) @binding(3) var<storage, read> wk: array<u32>;
@group(0) @binding(4) var<storage, read> wv: array<u32>;
@group(0) @binding(5) var<storage, read> state: array<u32>;
@group(0) @binding(6) var<storage, read_write> kCache: array<f32>;
@group(0) @binding(7) var<storage, read_write> vCache: array<f32>;
@group(0) @binding(8) var<storage, read_write> o: array<f32>;
#include "lib/decode_rows.wgsl"
#include "lib/decode_qk.wgsl"

var<workgroup> xs: array<f32, D>;                  // the normed row
var<workgroup> xa: array<f32, 3u * R>;             // scale (h Aᵀ) of q, k, v's adapters
var<workgroup> proj: array<f32, (GROUP + 2u) * DH>; // q of the group's heads, then k, then v
var<workgroup> headScale: array<f32, GROUP + 1u>;  // 1 / rms of each q head and of k (Qwen3)
var<workgroup> scores: array<f32, GROUP * WG>;  // a block's scores, then weights, per head
var<workgroup> headMax: array<f32, GROUP>;       // each head's running maximum score
var<workgroup> headCorr: array<f32, GROUP>;      // exp(last maximum - new maximum) in this block
var<workgroup> headSum: array<f32, GROUP>;       // each head's running sum of weights

/** Weight element i of projection `which` (0 q, 1 k, 2 v), widened to f32. */
fn weight(which: u32, i: u32) -> f32 {
  let word = packedWord(i, W_FORMAT);
  switch (which) {
    case 0u: { return packedValue(wq[word], i, W_FORMAT); }
    case 1u: { return packedValue(wk[word], i, W_FORMAT); }
    default: { return packedValue(wv[word], i, W_FORMAT); }
  }
}



/** Key (or value) element d of cache slot j of this (row, kv head); slot `len` is the one just computed. */
fn cached(isValue: bool, slot: u32, j: u32, d: u32, len: u32) -> f32 {
  if (j == len) { return proj[(GROUP + select(0u, 1u, isValue)) * DH + d]; }
  let i = (slot * p.cap + j) * DH + d;
  if (isValue) { return vCache[i]; }
  return kCache[i];
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let kvh = wid.x;
  let b = wid.y;
  if (stoppedRow(b)) { return; } // uniform per workgroup
  // The normed row.
  var ss = 0.0;
  for (var i = lid; i < D; i += WG) {
    let v = x[b * D + i];
    xs[i] = v;
    ss += v * v;
  }
  let rstd = 1.0 / sqrt(reduceSum(lid, ss) / f32(D) + p.eps);
  for (var i = lid; i < D; i += WG) { xs[i] = xs[i] * rstd * stateF(p.normAt + i); }
  workgroupBarrier();
  // The adapters' rank-wide products.
  for (var t = lid; t < 3u * R; t += WG) {
    let at = loraOf(t / R);
    var acc = 0.0;
    if (at != NONE) {
      let a = at + (t % R) * D;
      for (var i = 0u; i < D; i++) { acc += xs[i] * stateF(a + i); }
    }
    xa[t] = acc * p.loraScale;
  }
  workgroupBarrier();
  // proj: the group's q heads, then k, then v of head kvh (projColumn), with biases and adapters.
  let nq = GROUP * DH;
  for (var c = lid; c < nq + 2u * DH; c += WG) {
    let col = projColumn(kvh, c);
    var acc = 0.0;
    for (var i = 0u; i < D; i++) { acc += xs[i] * weight(col.x, col.y * D + i); }
    proj[c] = withBiasAndAdapter(col.x, col.y, D, acc, 0u);
  }
  workgroupBarrier();
  normAndRotate(lid, b, 1u);
  // k and v into the cache.
  let slot = b * p.Hkv + kvh;
  let len = cacheLen();
  for (var d = lid; d < DH; d += WG) {
    kCache[(slot * p.cap + len) * DH + d] = proj[nq + d];
    vCache[(slot * p.cap + len) * DH + d] = proj[nq + DH + d];
  }
  // Attention of the group's query heads over keys keyStart..len, WG keys at a time (an online softmax across
  // blocks): thread t scores key j0 + t for every head; thread h < GROUP updates head h's running max; thread t
  // turns its scores into weights (one exp per head and key); then each thread accumulates the weighted values
  // of its (head, dim) pairs, and thread h the weights' sum.
  let first = keyStartOf(b);
  if (lid < GROUP) {
    headMax[lid] = -3.0e38;
    headSum[lid] = 0.0;
  }
  var acc: array<f32, PAIRS>;
  for (var j0 = first; j0 <= len; j0 += WG) {
    let j = j0 + lid;
    let n = min(WG, len + 1u - j0);
    for (var hh = 0u; hh < GROUP; hh++) {
      var s = -3.0e38;
      if (j <= len) {
        var dot = 0.0;
        for (var d = 0u; d < DH; d++) { dot += proj[hh * DH + d] * cached(false, slot, j, d, len); }
        s = p.scale * dot;
      }
      scores[hh * WG + lid] = s;
    }
    workgroupBarrier();
    if (lid < GROUP) {
      var mb = headMax[lid];
      for (var t = 0u; t < n; t++) { mb = max(mb, scores[lid * WG + t]); }
      headCorr[lid] = exp(headMax[lid] - mb);
      headMax[lid] = mb;
    }
    workgroupBarrier();
    for (var hh = 0u; hh < GROUP; hh++) {
      scores[hh * WG + lid] = select(0.0, exp(scores[hh * WG + lid] - headMax[hh]), lid < n);
    }
    workgroupBarrier();
    if (lid < GROUP) {
      var sum = 0.0;
      for (var t = 0u; t < n; t++) { sum += scores[lid * WG + t]; }
      headSum[lid] = headSum[lid] * headCorr[lid] + sum;
    }
    for (var k = 0u; k < PAIRS; k++) {
      let pair = lid + k * WG;
      if (pair < GROUP * DH) {
        let hh = pair / DH;
        let d = pair % DH;
        var a = acc[k] * headCorr[hh];
        for (var t = 0u; t < n; t++) { a += scores[hh * WG + t] * cached(true, slot, j0 + t, d, len); }
        acc[k] = a;
      }
    }
    workgroupBarrier(); // scores and the heads' values are rewritten by the next block
  }
  for (var k = 0u; k < PAIRS; k++) {
    let pair = lid + k * WG;
    if (pair < GROUP * DH) {
      o[(b * p.Hkv * GROUP + kvh * GROUP) * DH + pair] = acc[k] / headSum[pair / DH];
    }
  }
}
