// Helpers of the 'rows' attention kernels (attention_rows_fwd.wgsl, attention_split_fwd.wgsl,
// attention_lanes_fwd.wgsl, attention_rows_bwd.wgsl), where each invocation owns a register tile of TR query rows:
//   IOTA       the lane offsets 0..3 of a vec4 half of a block;
//   queryTile  the setup of the query-row entries (forward main, backward dq): an invocation's TR query
//              rows, the keys they see and where their data starts;
//   blockEnds, seen  the subtree ends of a block's keys and which of them a row sees (the key mask);
//   softmaxStep  a row's online-softmax step over a block of keys (the forwards);
//   queriesSee, probsAndGrads  the backward's mask of a key row against 4 queries, and P and dS of 4 pairs.
// It declares what the kernels share: the workgroup size, the uniform and the inputs (attention_inputs.wgsl).
// The including shader declares `const TR` (query rows per tile) and `const MAXD` (the columns of a pass: its
// private accumulators hold TR * MAXD floats; wider head dims go in several passes). A taller tile loads each
// key and value element once for more rows, which is what costs on a CPU driver, but its accumulators grow
// with it, and with them lavapipe's compile time: each kernel picks its own. Score tiles declared in a loop take
// an explicit zero initializer (`var Sa = array<vec4f, TR>();`): declared without one, they kept the last
// iteration's sums (Dawn on lavapipe), which the attention tests' second key block caught.

#include "lib/attention_inputs.wgsl"

override WG: u32; // the workgroup size, set by the host

struct Params {
  Hq: u32, Hkv: u32, Tq: u32, Tk: u32, cap: u32, Dh: u32, off: u32, scale: f32,
  hasKeyStart: u32, keyEnds: u32, queryCols: u32, // the key mask (lib/attention_key_mask.wgsl)
  qH: u32, qT: u32, kH: u32, kT: u32, // the layout strides (lib/attention_inputs.wgsl)
}

const IOTA = vec4u(0u, 1u, 2u, 3u);

struct QueryTile {
  nOut: u32, // rows to store (1..TR); 0 when the invocation has no row and should return
  row: array<u32, TR>, // index into stats, [B, Hq, Tq]
  qBase: array<u32, TR>, // the row's start in q, o, dO and dq
  rowEnd: array<u32, TR>, // row u sees keys [ks, rowEnd[u]) whose subtrees hold it (seen)
  kvBase: u32, // the kv head's start in k and v (kvHead); key j at kvBase + j * p.kT
  b: u32, // the batch row
  ks: u32, // the batch row's first visible key (firstKey)
  end: u32, // rowEnd[TR - 1]: the rows are in query order, so the last sees the most keys
  pos0: u32, // rowEnd[0] - 1, the first row's position: no row sees a subtree that ends at or before it
}

// The tile of invocation lid of workgroup wid = (block of WG * TR rows, kv head, batch). A kv head's rows are
// its G * Tq (query, group head) pairs, query-major; the invocation takes rows r0 .. r0 + TR - 1, and rows past
// the end repeat the last one (the caller stores nothing for them).
fn queryTile(wid: vec3u, lid: u32) -> QueryTile {
  var t: QueryTile; // all zero: nOut = 0
  let G = p.Hq / p.Hkv;
  let nRows = G * p.Tq;
  let b = wid.z;
  let kvh = wid.y;
  let r0 = (wid.x * WG + lid) * TR;
  if (r0 >= nRows) { return t; }
  t.nOut = min(TR, nRows - r0);
  for (var u = 0u; u < TR; u++) {
    let r = min(r0 + u, nRows - 1u);
    let i = r / G;
    let h = kvh * G + r % G;
    t.row[u] = (b * p.Hq + h) * p.Tq + i;
    t.qBase[u] = qHead(b, h) + i * p.qT;
    t.rowEnd[u] = min(queryCol(b, i) + 1u, p.Tk);
  }
  t.kvBase = kvHead(b, kvh);
  t.b = b;
  t.ks = firstKey(b);
  t.end = t.rowEnd[TR - 1u];
  t.pos0 = t.rowEnd[0] - 1u;
  return t;
}

// The subtree ends (keyEnd) of keys ja of a block; lanes past t.end read a valid key's (seen masks them anyway).
fn blockEnds(t: QueryTile, ja: vec4u) -> vec4u {
  if (p.keyEnds == 0u) { return vec4u(p.Tk); }
  let c = min(ja, vec4u(t.end - 1u));
  return vec4u(keyEnd(t.b, c.x), keyEnd(t.b, c.y), keyEnd(t.b, c.z), keyEnd(t.b, c.w));
}

// Which of keys ja (ends ea = blockEnds) row u sees: up to its position rowEnd - 1, and within their subtrees.
fn seen(t: QueryTile, u: u32, ja: vec4u, ea: vec4u) -> vec4<bool> {
  let re = vec4u(t.rowEnd[u]);
  return (ja < re) & (re <= ea);
}

// One row's online-softmax step over a block of 8 keys (the forwards): its scores q.k against keys a (the first 4)
// and b, which of them it sees, and its running maximum m and sum l. Returns the new m and l, the block's weights
// exp(scale q.k - m) (0 where not seen) and alpha, which rescales the sums accumulated against the old maximum.
const NEG = -3.0e38; // "minus infinity" that stays finite, so exp(NEG - m) is 0 and never NaN

struct SoftmaxStep { m: f32, l: f32, alpha: f32, wa: vec4f, wb: vec4f }

fn softmaxStep(qka: vec4f, qkb: vec4f, seenA: vec4<bool>, seenB: vec4<bool>, m: f32, l: f32) -> SoftmaxStep {
  let sa = select(vec4f(NEG), p.scale * qka, seenA);
  let sb = select(vec4f(NEG), p.scale * qkb, seenB);
  let mx = max(sa, sb);
  var r: SoftmaxStep;
  r.m = max(m, max(max(mx.x, mx.y), max(mx.z, mx.w)));
  r.alpha = exp(m - r.m);
  r.wa = select(vec4f(0.0), exp(sa - r.m), seenA);
  r.wb = select(vec4f(0.0), exp(sb - r.m), seenB);
  r.l = l * r.alpha + dot(r.wa + r.wb, vec4f(1.0));
  return r;
}

// Which of queries i (4 of them, at positions off + i) see key j, whose subtree ends at e (keyEnd) and which is a key
// of the batch row at all (valid): those with j <= off + i < e, i < Tq. The dkv passes' mask of a key row.
fn queriesSee(j: u32, e: u32, valid: bool, i: vec4u) -> vec4<bool> {
  return queriesAtSee(j, e, valid, i, vec4u(p.off) + i);
}

// The same for queries i at positions P (queryCol).
fn queriesAtSee(j: u32, e: u32, valid: bool, i: vec4u, P: vec4u) -> vec4<bool> {
  return vec4<bool>(valid) & (i < vec4u(p.Tq)) & (vec4u(j) <= P) & (P < vec4u(e));
}

// The backward's two per-pair terms for 4 (query, key) pairs: P = exp(scale q.k - lse) where seen (else 0) and
// dS = P * (dP - D), from the pairs' q.k, dP = dO.v and their queries' lse and D = dO.O.
struct PairGrads { P: vec4f, dS: vec4f }

fn probsAndGrads(qk: vec4f, dP: vec4f, lse: vec4f, D: vec4f, seen: vec4<bool>) -> PairGrads {
  let P = select(vec4f(0.0), exp(p.scale * qk - lse), seen);
  return PairGrads(P, P * (dP - D));
}
