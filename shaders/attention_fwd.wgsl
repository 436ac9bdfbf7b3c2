// Fused causal attention, forward (flash-attention style), with grouped-query heads and a KV cache.
//
//   q [B, Hq, Tq, Dh]; k, v [B, Hkv, cap, Dh] of which the first Tk time steps are valid; o like q.
//   Query i sits at absolute position off + i and sees keys j with keyStart[b] <= j <= off + i, j < Tk.
//   Query head h reads kv head h / G (G = Hq / Hkv). Scores are scale * q.k; a row with no visible key
//   gets o = 0.
//   stats [B, Hq, Tq, 2]: slot 0 receives the row's log-sum-exp of its scores (0 for an empty row), which
//   the backward uses to recompute probabilities; slot 1 is left for the backward (it writes D there).
//
// Work layout: workgroup (x, y, z) = (block of ROWS rows, kv head, batch). The rows of a kv head are its
// G * Tq (group head, query) pairs, so the query heads that share a kv head share its K/V tiles (decoding
// with GQA fills a workgroup with the group's heads). NC threads own one row, each holding a CV-vec4 chunk
// of q and of the output accumulator in registers; the NC partial dot products of a score meet in
// workgroup memory. Keys stream through workgroup memory in blocks of BK with an online softmax (running
// max m and running sum l, rescaling the accumulator when m grows), so no [Tq, Tk] matrix is ever stored.
override NC: u32 = 1u; // threads per row (a power of two <= 16); ROWS = WG / NC
override CV: u32 = 8u; // vec4s of the head dimension per thread (<= MAXV); NC * CV * 4 >= Dh
override BK: u32 = 16u; // keys per block (<= 32)
override HAS_KEY_START: bool = false;

const WG = 64u;
const MAXV = 8u;
const NEG = -3.0e38; // "minus infinity" that stays finite, so exp(NEG - m) is 0 and never NaN

struct Params { Hq: u32, Hkv: u32, Tq: u32, Tk: u32, cap: u32, Dh: u32, off: u32, scale: f32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> keyStart: array<i32>;
@group(0) @binding(5) var<storage, read_write> o: array<f32>;
@group(0) @binding(6) var<storage, read_write> stats: array<f32>;

var<workgroup> kt: array<vec4f, BK * NC * CV>; // [key][head-dim vec4], zero padded to NC * CV vec4s
var<workgroup> vt: array<vec4f, BK * NC * CV>;
var<workgroup> part: array<f32, WG * BK>; // [row][chunk][key] partial scores

// Four consecutive elements of a row starting at column d, zero past the head dimension.
fn ldq(base: u32, d: u32) -> vec4f {
  var r = vec4f(0.0);
  for (var x = 0u; x < 4u; x++) { if (d + x < p.Dh) { r[x] = q[base + d + x]; } }
  return r;
}
fn ldk(base: u32, d: u32) -> vec4f {
  var r = vec4f(0.0);
  for (var x = 0u; x < 4u; x++) { if (d + x < p.Dh) { r[x] = k[base + d + x]; } }
  return r;
}
fn ldv(base: u32, d: u32) -> vec4f {
  var r = vec4f(0.0);
  for (var x = 0u; x < 4u; x++) { if (d + x < p.Dh) { r[x] = v[base + d + x]; } }
  return r;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let rowsPerWg = WG / NC;
  let G = p.Hq / p.Hkv;
  let nRows = G * p.Tq;
  let b = wid.z;
  let kvh = wid.y;
  let rl = lid / NC; // row within the workgroup
  let ch = lid % NC; // which chunk of the head dimension this thread owns
  let r = wid.x * rowsPerWg + rl;
  let live = r < nRows;
  let i = r % p.Tq;
  let hq = kvh * G + r / p.Tq;
  let qBase = ((b * p.Hq + hq) * p.Tq + i) * p.Dh;
  let kvBase = (b * p.Hkv + kvh) * p.cap * p.Dh;
  let vecsPerRow = NC * CV;

  var ks = 0u;
  if (HAS_KEY_START) { ks = u32(max(keyStart[b], 0)); }
  // Keys this row sees: [ks, rowEnd).
  let rowEnd = min(p.off + i + 1u, p.Tk);

  // Keys any row of the workgroup sees: [ks, wgEnd). The block's rows are consecutive (head, query) pairs;
  // when they cross into another head they include that head's last query.
  let r0 = wid.x * rowsPerWg;
  let r1 = min(r0 + rowsPerWg, nRows) - 1u;
  var lastI = p.Tq - 1u;
  if (r0 / p.Tq == r1 / p.Tq) { lastI = r1 % p.Tq; }
  let wgEnd = min(p.off + lastI + 1u, p.Tk);

  // This thread's chunk of q, pre-scaled.
  var qv: array<vec4f, MAXV>;
  var acc: array<vec4f, MAXV>;
  for (var c = 0u; c < CV; c++) {
    if (live) { qv[c] = p.scale * ldq(qBase, (ch * CV + c) * 4u); }
  }
  var m = NEG;
  var l = 0.0;
  var sc: array<f32, 32>;

  for (var kb = ks; kb < wgEnd; kb += BK) {
    // Stage BK rows of K and V (zero past the valid keys).
    for (var idx = lid; idx < BK * vecsPerRow; idx += WG) {
      let key = kb + idx / vecsPerRow;
      let d = (idx % vecsPerRow) * 4u;
      var kx = vec4f(0.0);
      var vx = vec4f(0.0);
      if (key < p.Tk) {
        kx = ldk(kvBase + key * p.Dh, d);
        vx = ldv(kvBase + key * p.Dh, d);
      }
      kt[idx] = kx;
      vt[idx] = vx;
    }
    workgroupBarrier();

    // Partial scores over this thread's chunk.
    if (live) {
      for (var j = 0u; j < BK; j++) {
        var s = 0.0;
        for (var c = 0u; c < CV; c++) { s += dot(qv[c], kt[j * vecsPerRow + ch * CV + c]); }
        sc[j] = s;
        if (NC > 1u) { part[(rl * NC + ch) * BK + j] = s; }
      }
    }
    if (NC > 1u) { workgroupBarrier(); }

    if (live) {
      // Full scores (every thread of the row sums the partials in the same order, so all agree), masked.
      var mb = m;
      for (var j = 0u; j < BK; j++) {
        var s = sc[j];
        if (NC > 1u) {
          s = 0.0;
          for (var c = 0u; c < NC; c++) { s += part[(rl * NC + c) * BK + j]; }
        }
        if (kb + j < rowEnd) {
          sc[j] = s;
          mb = max(mb, s);
        } else {
          sc[j] = NEG;
        }
      }
      if (mb > m) {
        // A larger maximum: rescale what was accumulated against the old one.
        let alpha = exp(m - mb);
        l *= alpha;
        for (var c = 0u; c < CV; c++) { acc[c] *= alpha; }
        m = mb;
      }
      for (var j = 0u; j < BK; j++) {
        if (kb + j < rowEnd) {
          let pj = exp(sc[j] - m);
          l += pj;
          for (var c = 0u; c < CV; c++) { acc[c] += pj * vt[j * vecsPerRow + ch * CV + c]; }
        }
      }
    }
    workgroupBarrier(); // the tiles are overwritten next block
  }

  if (!live) { return; }
  var inv = 0.0;
  if (l > 0.0) { inv = 1.0 / l; }
  for (var c = 0u; c < CV; c++) {
    let d = (ch * CV + c) * 4u;
    for (var x = 0u; x < 4u; x++) {
      if (d + x < p.Dh) { o[qBase + d + x] = acc[c][x] * inv; }
    }
  }
  if (ch == 0u) {
    let row = (b * p.Hq + hq) * p.Tq + i;
    stats[2u * row] = select(0.0, m + log(l), l > 0.0);
  }
}
