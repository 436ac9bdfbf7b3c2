enable subgroups;
// Fused causal attention, forward, for CPU drivers whose subgroups are 8 lanes (lavapipe): the semantics,
// bindings and saved stats of attention_rows_fwd.wgsl, with the work shared across the subgroup as
// matmul_subgroup_k4.wgsl shares it. A workgroup is one subgroup of 8 lanes; lane l owns TR query rows (queryTile)
// and keeps their q in registers for the whole pass. Keys come in blocks of 8, one per lane: each lane loads its
// own key's k (or v) row and subgroupBroadcast hands it to the others, so a k or v element is loaded once per
// subgroup, not once per lane. Every loop over the head dim DH (a pipeline constant, a multiple of 4 up to MAXDH)
// is unrolled, so q, the scores and the output sums sit at fixed indices: registers (or plain spills), not the
// lane-by-lane private-array accesses a run-time index costs on llvmpipe. The key loop's bounds are the
// workgroup's (its first row's position and its last row's end), the same in every lane, as the broadcasts need.
// The sums run in attention_rows_fwd.wgsl's order (one head-dim column at a time, blocks of 8 keys from the same
// first key; a block past a row's keys adds exact zeros), so without a prefix-tree mask the two agree bit for bit
// and a row's numbers do not depend on which of them its call's shape picks.
@group(0) @binding(5) var<storage, read_write> o: array<f32>;
@group(0) @binding(6) var<storage, read_write> stats: array<f32>;

override DH: u32; // head dim: a multiple of 4, at most MAXDH
const TR = 4u; // query rows per lane (the host's LANES_TILE)
const MAXDH = 64u; // the arrays' head dim: the host sets it to DH in the text (its LANES_MAX_HEAD_DIM here)
#include "lib/attention_rows.wgsl"
#include "lib/attention_lanes.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  let w = groupKeys(wid);
  if (!w.any) { return; }
  // This lane's rows (lanes past the last row get none: every key masked, nothing stored).
  let t = queryTile(wid, lane);
  var qr: array<array<vec4f, MAXDH / 4u>, TR>;
  for (var u = 0u; u < TR; u++) {
    for (var d4 = 0u; d4 < DH / 4u; d4++) { qr[u][d4] = q4(t.qBase[u], d4); }
  }
  var m: array<f32, TR>;
  var l: array<f32, TR>;
  var acc: array<array<vec4f, MAXDH / 4u>, TR>;
  for (var u = 0u; u < TR; u++) {
    m[u] = NEG;
    l[u] = 0.0;
    for (var d4 = 0u; d4 < DH / 4u; d4++) { acc[u][d4] = vec4f(0.0); }
  }
  for (var j = w.first; j < w.end; j = nextKey(w.b, j + 8u, w.pos, w.end)) {
    let blk = keyBlock(w, j, lane);
    var Sa = array<vec4f, TR>(); // row u's scores for keys j..j+3
    var Sb = array<vec4f, TR>(); // and j+4..j+7
    for (var d4 = 0u; d4 < DH / 4u; d4++) {
      let kk = lanes8v(k4(blk.at, d4));
      let ka = columns4(kk, 0u); // ka[c]: column 4 d4 + c of keys j..j+3
      let kb = columns4(kk, 4u);
      for (var u = 0u; u < TR; u++) {
        let x = qr[u][d4];
        Sa[u] += x.x * ka[0];
        Sb[u] += x.x * kb[0];
        Sa[u] += x.y * ka[1];
        Sb[u] += x.y * kb[1];
        Sa[u] += x.z * ka[2];
        Sb[u] += x.z * kb[2];
        Sa[u] += x.w * ka[3];
        Sb[u] += x.w * kb[3];
      }
    }
    var alpha: array<f32, TR>;
    for (var u = 0u; u < TR; u++) {
      let r = softmaxStep(Sa[u], Sb[u], seen(t, u, blk.ja, blk.ea), seen(t, u, blk.jb, blk.eb), m[u], l[u]);
      alpha[u] = r.alpha;
      Sa[u] = r.wa;
      Sb[u] = r.wb;
      l[u] = r.l;
      m[u] = r.m;
    }
    for (var d4 = 0u; d4 < DH / 4u; d4++) {
      let vv = lanes8v(v4(blk.at, d4));
      let va = columns4(vv, 0u);
      let vb = columns4(vv, 4u);
      for (var u = 0u; u < TR; u++) {
        acc[u][d4] = alpha[u] * acc[u][d4] + dots4(Sa[u], va) + dots4(Sb[u], vb);
      }
    }
  }
  for (var u = 0u; u < TR; u++) {
    if (u < t.nOut) {
      let inv = select(0.0, 1.0 / l[u], l[u] > 0.0);
      for (var d4 = 0u; d4 < DH / 4u; d4++) {
        let x = acc[u][d4] * inv;
        let at = t.qBase[u] + 4u * d4;
        o[at] = x.x;
        o[at + 1u] = x.y;
        o[at + 2u] = x.z;
        o[at + 3u] = x.w;
      }
      stats[2u * t.row[u]] = select(0.0, m[u] + log(l[u]), l[u] > 0.0);
    }
  }
}
