// The attention half of a decoder layer for one decoding step, shaped for a CPU driver: decode_attention_lanes.wgsl
// (weights read from storage) and decode_attention_lanes_uniform.wgsl (through uniform windows) include it, each
// declaring the projections' bindings 2-4: wq, wk and wv, arrays of vec4<u32> words (lib/weights8.wgsl).
//
// decode_attention (input norm, q/k/v with biases and LoRA, Qwen3's q/k norms, RoPE, the KV append, causal
// attention; the same params and numbers), where a workgroup runs as SIMD lanes on one core and every barrier
// switches between its lanes' saved states. One workgroup per (kv head, RT rows) is one subgroup of WG lanes (the
// host runs this kernel only where subgroups are exactly WG wide). Each lane owns q/k/v columns and reads its weights
// 8 at a time as vec4 words (lib/weights8.wgsl), once for the workgroup's RT rows: a CPU driver loads lane by lane,
// so with a workgroup per row the projections' weights were read once per row and cost more than the attention (4
// rows at a 50-token context: 330 against 130 µs a dispatch without them). The slots' rows are normed once into
// workgroup memory (normed anew at each pass, the norm's loads had matched the weights'); as in
// lib/matvec_lanes.wgsl, lane s < RT loads its row's normed group of eight and subgroupBroadcast (from a constant
// lane) hands it to the others, and a lane computes PC columns per pass over the row, so each row load serves PC
// weight loads: a row spread over the lanes and fetched back by its run-time index (a private array and
// subgroupShuffle) cost several times the weight loads on llvmpipe. The attention, row after row, splits the keys
// across the lanes (key first + lane, first + lane + WG, ...), each lane keeping its own online softmax for the
// group's heads, and merges the lanes with subgroup reductions (as attention_split_fwd.wgsl does): M = max m,
// L = sum l exp(m - M), o = sum acc exp(m - M) / L. A few barriers per workgroup share the projections, none per
// key. D is a multiple of 8; DH a multiple of 4 up to CHUNK; GROUP at most MAXH.
#include "lib/packed16.wgsl"
#include "lib/weights8.wgsl"
#include "lib/rope_turns.wgsl"
override WG: u32;       // lanes: the subgroup
override DH: u32;       // head dim
override GROUP: u32;    // query heads per kv head
override R: u32 = 1u;   // LoRA rank (1 without adapters)
override W_FORMAT: u32 = FORMAT_F32;
override HN: u32;       // RT * D / 4: the slots' normed rows' vec4 words
const CHUNK = 64u;      // (head, dim) output sums a lane keeps per pass over the keys
const MAXH = 16u;       // query heads per kv head, at most
const RT = 4u;          // rows per workgroup (the host's LANES_ROWS)
const PC = 4u;          // projection columns per lane in one pass over the normed rows

struct Params {
  rows: u32, n: u32, Hkv: u32, cap: u32, len0: u32, eps: f32, scale: f32,
  freqAt: u32, normAt: u32, qNormAt: u32, kNormAt: u32, biasQ: u32, biasK: u32, biasV: u32,
  loraQ: u32, loraK: u32, loraV: u32, loraScale: f32,
  // The hidden size as a uniform, not a constant: unrolled over a constant D, lavapipe took 6x longer to build
  // this kernel. DH and GROUP stay constants: loops over them unrolled keep the lanes' sums in registers (1.3x).
  D: u32, // hidden size
}
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4f>;
@group(0) @binding(5) var<storage, read> state: array<u32>;
@group(0) @binding(6) var<storage, read_write> kCache: array<vec4f>;
@group(0) @binding(7) var<storage, read_write> vCache: array<vec4f>;
@group(0) @binding(8) var<storage, read_write> o: array<f32>;
#include "lib/decode_rows.wgsl"
#include "lib/decode_qk.wgsl"

// Per row of the workgroup:
var<workgroup> xa: array<f32, RT * 3u * R>;            // scale (h Aᵀ) of q, k, v's adapters
var<workgroup> proj: array<f32, RT * (GROUP + 2u) * DH>; // q of the group's heads, then k, then v
var<workgroup> headScale: array<f32, RT * (GROUP + 1u)>; // 1 / rms of each q head and of k (Qwen3)
var<workgroup> hn: array<vec4f, HN>;                      // the normed row (slot s from hn[s * D / 4])

/** Weights 8g .. 8g + 7 of row `row` of projection `which` (0 q, 1 k, 2 v). */
fn weights(which: u32, row: u32, g: u32) -> Eight {
  let i = (row * (p.D / 8u) + g) * WORDS8;
  let j = i + WORDS8 - 1u;
  switch (which) {
    case 0u: { return unpack8(wq[i], wq[j]); }
    case 1u: { return unpack8(wk[i], wk[j]); }
    default: { return unpack8(wv[i], wv[j]); }
  }
}

/** Eight f32 values of the state buffer from word i. */
fn state8(i: u32) -> Eight {
  return Eight(
    vec4f(stateF(i), stateF(i + 1u), stateF(i + 2u), stateF(i + 3u)),
    vec4f(stateF(i + 4u), stateF(i + 5u), stateF(i + 6u), stateF(i + 7u)),
  );
}

/** Where a pass column's weights are the state's words from `row` on (an adapter's A row), not a projection's row. */
const STATE_ROW = 3u;

/** A lane's columns of one pass: each one's weights (projection 0 q, 1 k, 2 v, or STATE_ROW; row), if used. */
struct PassCols {
  at: array<vec2u, PC>,
  used: array<bool, PC>,
}

/** Elements 8g .. 8g + 7 of the normed row of slot `lane` (zeros on a lane past the `slots`), from hn. */
fn normedGroup(slots: u32, lane: u32, g: u32) -> Eight {
  if (lane >= slots) { return Eight(vec4f(0.0), vec4f(0.0)); }
  let i = (lane * p.D) / 4u + 2u * g;
  return Eight(hn[i], hn[i + 1u]);
}

/** Lane s's h for each slot s (subgroupBroadcast takes a constant lane, hence the spelled-out lanes). */
fn slotRows(h: Eight) -> array<Eight, RT> {
  return array<Eight, RT>(
    Eight(subgroupBroadcast(h.lo, 0u), subgroupBroadcast(h.hi, 0u)),
    Eight(subgroupBroadcast(h.lo, 1u), subgroupBroadcast(h.hi, 1u)),
    Eight(subgroupBroadcast(h.lo, 2u), subgroupBroadcast(h.hi, 2u)),
    Eight(subgroupBroadcast(h.lo, 3u), subgroupBroadcast(h.hi, 3u)),
  );
}

/**
 * acc[s][c]: the normed row of slot s dotted with this lane's pass column c (0 where the column is unused or past
 * the slots), summed group by group in order. Each row group is loaded once per pass, each weight once for every
 * row. Every lane must call it (subgroupBroadcast).
 */
fn normedDots(slots: u32, lane: u32, cols: PassCols) -> array<array<f32, PC>, RT> {
  var acc = array<array<f32, PC>, RT>();
  for (var g = 0u; g < p.D / 8u; g++) {
    let h = slotRows(normedGroup(slots, lane, g));
    for (var c = 0u; c < PC; c++) {
      var e = Eight(vec4f(0.0), vec4f(0.0));
      if (cols.used[c]) {
        let at = cols.at[c];
        if (at.x == STATE_ROW) { e = state8(at.y + 8u * g); } else { e = weights(at.x, at.y, g); }
      }
      for (var s = 0u; s < RT; s++) { acc[s][c] += dot8(h[s], e); }
    }
  }
  return acc;
}

/** proj[at .. at + 3] as a vec4. */
fn proj4(at: u32) -> vec4f { return vec4f(proj[at], proj[at + 1u], proj[at + 2u], proj[at + 3u]); }

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  let kvh = wid.x;
  let r0 = wid.y * RT;
  // Slot s holds row r0 + s: the first `slots` are rows of the call; a live one has not stopped. All uniform per
  // workgroup.
  let slots = min(RT, p.n - r0);
  var live = array<bool, RT>();
  var anyLive = false;
  for (var s = 0u; s < RT; s++) {
    live[s] = s < slots && !stoppedRow(r0 + s);
    anyLive = anyLive || live[s];
  }
  if (!anyLive) { return; }
  // Each slot's 1 / rms: lane t sums the squares of groups t, t + WG, ... of the row.
  let groups = p.D / 8u;
  var scale = array<f32, RT>();
  for (var s = 0u; s < RT; s++) {
    if (s < slots) {
      let b = r0 + s;
      var ss = 0.0;
      for (var g = lane; g < (groups + WG - 1u) / WG * WG; g += WG) {
        var e8 = Eight(vec4f(0.0), vec4f(0.0));
        if (g < groups) { e8 = Eight(x[(b * p.D) / 4u + 2u * g], x[(b * p.D) / 4u + 2u * g + 1u]); }
        ss += dot8(e8, e8);
      }
      scale[s] = 1.0 / sqrt(subgroupAdd(ss) / f32(p.D) + p.eps);
    }
  }
  // Lane s < slots norms its slot's row into hn, once for every pass of the projections.
  var own = 0.0;
  for (var s = 0u; s < RT; s++) {
    if (s == lane) { own = scale[s]; }
  }
  if (lane < slots) {
    for (var g = 0u; g < groups; g++) {
      let i = ((r0 + lane) * p.D) / 4u + 2u * g;
      let n = state8(p.normAt + 8u * g);
      hn[(lane * p.D) / 4u + 2u * g] = x[i] * own * n.lo;
      hn[(lane * p.D) / 4u + 2u * g + 1u] = x[i + 1u] * own * n.hi;
    }
  }
  workgroupBarrier();
  // The adapters' rank-wide products: the lanes split the (adapter, rank) pairs, PC a lane per pass.
  if (p.loraQ != NONE || p.loraK != NONE || p.loraV != NONE) {
    for (var t0 = 0u; t0 < 3u * R; t0 += WG * PC) {
      var cols: PassCols;
      for (var c = 0u; c < PC; c++) {
        let t = t0 + lane + WG * c;
        let at = loraOf(min(t, 3u * R - 1u) / R);
        cols.at[c] = vec2u(STATE_ROW, at + (t % R) * p.D);
        cols.used[c] = t < 3u * R && at != NONE;
      }
      let acc = normedDots(slots, lane, cols);
      for (var c = 0u; c < PC; c++) {
        let t = t0 + lane + WG * c;
        if (t < 3u * R) {
          for (var s = 0u; s < RT; s++) { xa[s * 3u * R + t] = acc[s][c] * p.loraScale; }
        }
      }
    }
  }
  workgroupBarrier();
  // proj: each slot's q heads of the group, then k, then v of head kvh (projColumn), with biases and adapters.
  let nq = GROUP * DH;
  let nc = nq + 2u * DH;
  for (var c0 = 0u; c0 < nc; c0 += WG * PC) {
    var cols: PassCols;
    for (var c = 0u; c < PC; c++) {
      let v = c0 + lane + WG * c;
      cols.at[c] = projColumn(kvh, min(v, nc - 1u));
      cols.used[c] = v < nc;
    }
    let acc = normedDots(slots, lane, cols);
    for (var c = 0u; c < PC; c++) {
      let v = c0 + lane + WG * c;
      if (v < nc) {
        let col = cols.at[c];
        for (var s = 0u; s < RT; s++) {
          proj[s * PROJ_STRIDE + v] = withBiasAndAdapter(col.x, col.y, p.D, acc[s][c], s * 3u * R);
        }
      }
    }
  }
  workgroupBarrier();
  normAndRotate(lane, r0, RT);
  // Each live slot's k and v into the cache, then a barrier: every lane reads the new key and value back with the
  // cached ones.
  let len = cacheLen();
  for (var s = 0u; s < RT; s++) {
    if (live[s]) {
      let newest = (((r0 + s) * p.Hkv + kvh) * p.cap + len) * DH / 4u;
      for (var d4 = lane; d4 < DH / 4u; d4 += WG) {
        kCache[newest + d4] = proj4(s * PROJ_STRIDE + nq + 4u * d4);
        vCache[newest + d4] = proj4(s * PROJ_STRIDE + nq + DH + 4u * d4);
      }
    }
  }
  storageBarrier();
  for (var s = 0u; s < RT; s++) {
    if (live[s]) { attend(r0 + s, kvh, s * PROJ_STRIDE, lane, len); }
  }
}

/**
 * Row b's attention for kv head kvh over keys first..len, its queries at proj[at ..], the group's heads in passes
 * of hp whole heads (at most CHUNK sums a lane keeps). Lane t takes keys first + t, first + t + WG, ...; the pass's
 * queries are copied into each lane's registers first.
 */
fn attend(b: u32, kvh: u32, at: u32, lane: u32, len: u32) {
  let slot = b * p.Hkv + kvh;
  let first = keyStartOf(b);
  let hp = min(GROUP, CHUNK / DH);
  for (var h0 = 0u; h0 < GROUP; h0 += hp) {
    let nh = min(hp, GROUP - h0);
    var q: array<vec4f, CHUNK / 4u>;
    for (var i = 0u; i < nh * DH / 4u; i++) { q[i] = proj4(at + h0 * DH + 4u * i); }
    var m = array<f32, MAXH>();
    var l = array<f32, MAXH>();
    var acc = array<vec4f, CHUNK / 4u>();
    for (var hh = 0u; hh < nh; hh++) { m[hh] = -3.0e38; }
    for (var j = first + lane; j <= len; j += WG) {
      let kb = ((slot * p.cap + j) * DH) / 4u;
      var sc = array<f32, MAXH>();
      for (var d4 = 0u; d4 < DH / 4u; d4++) {
        let k4 = kCache[kb + d4];
        for (var hh = 0u; hh < nh; hh++) { sc[hh] += dot(q[hh * (DH / 4u) + d4], k4); }
      }
      var wt = array<f32, MAXH>();
      var corr = array<f32, MAXH>();
      for (var hh = 0u; hh < nh; hh++) {
        let z = p.scale * sc[hh];
        let mNew = max(m[hh], z);
        corr[hh] = exp(m[hh] - mNew);
        wt[hh] = exp(z - mNew);
        l[hh] = l[hh] * corr[hh] + wt[hh];
        m[hh] = mNew;
      }
      for (var d4 = 0u; d4 < DH / 4u; d4++) {
        let v4 = vCache[kb + d4];
        for (var hh = 0u; hh < nh; hh++) {
          let a = hh * (DH / 4u) + d4;
          acc[a] = acc[a] * corr[hh] + wt[hh] * v4;
        }
      }
    }
    // Merge the lanes: a lane that saw no key has l = 0 and acc = 0, so its weight is moot.
    for (var hh = 0u; hh < nh; hh++) {
      let M = subgroupMax(m[hh]);
      let w = exp(m[hh] - M);
      let L = subgroupAdd(l[hh] * w);
      for (var d = 0u; d < DH; d++) {
        let sum = subgroupAdd(acc[hh * (DH / 4u) + d / 4u][d % 4u] * w);
        if (d % WG == lane) { o[(b * p.Hkv * GROUP + kvh * GROUP + h0 + hh) * DH + d] = sum / L; }
      }
    }
  }
}
