// Fused causal attention, backward (flash-attention style): probabilities are recomputed from q, k and the
// forward's log-sum-exp instead of being stored. Shapes, masking and GQA exactly as attention_fwd.wgsl.
// With s = scale * q.k, P = exp(s - lse), dP = dO.v and D_i = sum_j P_ij dP_ij = dO_i . O_i:
//   dS = P * (dP - D),   dQ_i = scale * sum_j dS_ij k_j,   dK_j = scale * sum_i dS_ij q_i,   dV_j = sum_i P_ij dO_i
// where the sums over i for a kv head run over every query of every query head in its group.
//
// Two passes, each owning its outputs (no float atomics):
//   dq  - per query row, over its keys (like the forward). First computes D_i = dO_i . O_i and stores it
//         in stats[row].y for the next pass. Bindings: out = dQ, aux = O (read only here).
//   dkv - per key row, over the queries that see it, of all query heads of its group.
//         Bindings: out = dK, aux = dV.
// Both entries share one binding table (8 storage buffers at most), hence the role-neutral out/aux names.
// Thread layout as in the forward: nc threads per row, each owning cv vec4s of the head dimension; the
// streamed side (keys for dq, queries for dkv) passes through workgroup memory in blocks of bk.
//
// Layout constants as in attention_fwd.wgsl: FIXED = true on GPUs (one pipeline per layout, constant trip
// counts), false on CPU drivers (one pipeline for every shape, trip counts from the uniform).
override BK: u32 = 11u; // bk when FIXED; also sizes ts, so >= bk
override TILE: u32 = 320u; // vec4s in each staged tile: >= bk * nc * cv
override PART: u32 = 704u; // slots in each partial-sum array: >= WG * bk

@group(0) @binding(5) var<storage, read_write> stats: array<f32>; // [row][lse, D]
@group(0) @binding(6) var<storage, read> dO: array<f32>;
@group(0) @binding(7) var<storage, read_write> out: array<f32>;
@group(0) @binding(8) var<storage, read_write> aux: array<f32>;

var<workgroup> ta: array<vec4f, TILE>; // dq: K rows, dkv: q rows
var<workgroup> tb: array<vec4f, TILE>; // dq: V rows, dkv: dO rows
var<workgroup> ts: array<vec2f, BK>; // dkv: (lse, D) of the staged queries
var<workgroup> partS: array<f32, PART>; // [row][chunk][block item] partial q.k
var<workgroup> partP: array<f32, PART>; // [row][chunk][block item] partial dO.v

#include "lib/attention_tiled.wgsl"

fn lddo(base: u32, d: u32) -> vec4f {
  var r = vec4f(0.0);
  for (var x = 0u; x < 4u; x++) { if (d + x < p.Dh) { r[x] = dO[base + d + x]; } }
  return r;
}
fn ldaux(base: u32, d: u32) -> vec4f {
  var r = vec4f(0.0);
  for (var x = 0u; x < 4u; x++) { if (d + x < p.Dh) { r[x] = aux[base + d + x]; } }
  return r;
}
fn stOut(base: u32, d: u32, x4: vec4f) {
  for (var x = 0u; x < 4u; x++) { if (d + x < p.Dh) { out[base + d + x] = x4[x]; } }
}
fn stAux(base: u32, d: u32, x4: vec4f) {
  for (var x = 0u; x < 4u; x++) { if (d + x < p.Dh) { aux[base + d + x] = x4[x]; } }
}

// ---------------------------------------------------------------------------------------- dQ (and D)
// Workgroup (x, y, z) = (block of rows of the kv head's G * Tq (group head, query) pairs, kv head, batch).
@compute @workgroup_size(WG)
fn dq(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let nc = nChunks();
  let cv = nVec4();
  let bk = blockLen();
  let vecsPerRow = nc * cv;
  let qr = queryRow(wid, lid, nc);
  let keys = workgroupKeys(wid, nc);

  var qv: array<vec4f, MAXV>;
  var gv: array<vec4f, MAXV>; // dO
  var acc: array<vec4f, MAXV>;
  var dPart = 0.0;
  for (var c = 0u; c < cv; c++) {
    if (qr.live) {
      let d = (qr.ch * cv + c) * 4u;
      qv[c] = ldq(qr.qBase, d);
      gv[c] = lddo(qr.qBase, d);
      dPart += dot(gv[c], ldaux(qr.qBase, d)); // aux holds O in this pass
    }
  }
  // D_i = dO_i . O_i, summed over the row's chunks.
  partS[qr.mine] = dPart;
  if (nc > 1u) { workgroupBarrier(); }
  var D = 0.0;
  for (var c = 0u; c < nc; c++) { D += partS[qr.rl * nc + c]; }
  workgroupBarrier();
  var lse = 0.0;
  if (qr.live) {
    lse = stats[2u * qr.row];
    if (qr.ch == 0u) { stats[2u * qr.row + 1u] = D; }
  }

  for (var kb = keys.first; kb < keys.end; kb = nextBlock(wid, keys, kb, bk)) {
    stageKV(lid, kb, qr.kvBase, vecsPerRow, bk);
    if (qr.live) {
      for (var j = 0u; j < bk; j++) {
        var s = 0.0;
        var t = 0.0;
        for (var c = 0u; c < cv; c++) {
          let at = j * vecsPerRow + qr.ch * cv + c;
          s += dot(qv[c], ta[at]);
          t += dot(gv[c], tb[at]);
        }
        partS[qr.mine * bk + j] = s;
        partP[qr.mine * bk + j] = t;
      }
    }
    if (nc > 1u) { workgroupBarrier(); }
    if (qr.live) {
      for (var j = 0u; j < bk; j++) {
        if (kb + j >= qr.rowEnd) { break; }
        if (!seesKey(wid.z, qr, kb + j)) { continue; }
        var s = 0.0;
        var t = 0.0;
        for (var c = 0u; c < nc; c++) {
          s += partS[(qr.rl * nc + c) * bk + j];
          t += partP[(qr.rl * nc + c) * bk + j];
        }
        let pj = exp(p.scale * s - lse);
        let dsj = pj * (t - D);
        for (var c = 0u; c < cv; c++) { acc[c] += dsj * ta[j * vecsPerRow + qr.ch * cv + c]; }
      }
    }
    workgroupBarrier();
  }

  if (!qr.live) { return; }
  for (var c = 0u; c < cv; c++) { stOut(qr.qBase, (qr.ch * cv + c) * 4u, p.scale * acc[c]); }
}

// ---------------------------------------------------------------------------------------- dK, dV
// Workgroup (x, y, z) = (block of key rows of [0, cap), kv head, batch). Rows at or past Tk, or before
// the batch's first key, get zero gradients.
@compute @workgroup_size(WG)
fn dkv(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let nc = nChunks();
  let cv = nVec4();
  let bk = blockLen();
  let rowsPerWg = WG / nc;
  let G = p.Hq / p.Hkv;
  let b = wid.z;
  let kvh = wid.y;
  let rl = lid / nc;
  let ch = lid % nc;
  let j = wid.x * rowsPerWg + rl; // this row's key position
  let live = j < p.cap;
  let ks = firstKey(b);
  let keyValid = j >= ks && j < p.Tk;
  var kEnd = 0u; // the end of the positions that see this key (keyEnd)
  if (keyValid) { kEnd = keyEnd(b, j); }
  let kBase = kvHead(b, kvh) + j * p.kT;
  let vecsPerRow = nc * cv;
  let mine = rl * nc + ch;

  var kv: array<vec4f, MAXV>;
  var vv: array<vec4f, MAXV>;
  var dk: array<vec4f, MAXV>;
  var dv: array<vec4f, MAXV>;
  for (var c = 0u; c < cv; c++) {
    if (live) {
      let d = (ch * cv + c) * 4u;
      kv[c] = ldk(kBase, d);
      vv[c] = ldv(kBase, d);
    }
  }

  // Queries any key of the block sees: positions from the block's first valid key to before its largest subtree
  // end, i.e. iStart <= i < iEnd (uniform: the loop holds barriers). A block with no valid key runs no iterations.
  let j0 = max(wid.x * rowsPerWg, ks);
  let jEnd = min(wid.x * rowsPerWg + rowsPerWg, p.Tk);
  var iStart = p.Tq;
  var iEnd = p.Tq;
  if (j0 < jEnd) {
    iStart = max(j0, p.off) - p.off;
    iEnd = min(p.Tq, max(keysEnd(b, j0, jEnd), p.off) - p.off);
  }
  // The first query (position off + i) that sees this key.
  let iFirst = max(j, p.off) - p.off;

  for (var g = 0u; g < G; g++) {
    let hq = kvh * G + g;
    let rowBase = (b * p.Hq + hq) * p.Tq; // the head's first row in stats
    let qh = qHead(b, hq);
    for (var ib = iStart; ib < iEnd; ib += bk) {
      // Stage bk query rows of q and dO, and their (lse, D).
      for (var idx = lid; idx < bk * vecsPerRow; idx += WG) {
        let qi = ib + idx / vecsPerRow;
        let d = (idx % vecsPerRow) * 4u;
        var qx = vec4f(0.0);
        var gx = vec4f(0.0);
        if (qi < p.Tq) {
          qx = ldq(qh + qi * p.qT, d);
          gx = lddo(qh + qi * p.qT, d);
        }
        ta[idx] = qx;
        tb[idx] = gx;
      }
      for (var t = lid; t < bk; t += WG) {
        var st = vec2f(0.0);
        if (ib + t < p.Tq) { st = vec2f(stats[2u * (rowBase + ib + t)], stats[2u * (rowBase + ib + t) + 1u]); }
        ts[t] = st;
      }
      workgroupBarrier();
      if (live) {
        for (var t = 0u; t < bk; t++) {
          var s = 0.0;
          var u = 0.0;
          for (var c = 0u; c < cv; c++) {
            let at = t * vecsPerRow + ch * cv + c;
            s += dot(kv[c], ta[at]);
            u += dot(vv[c], tb[at]);
          }
          partS[mine * bk + t] = s;
          partP[mine * bk + t] = u;
        }
      }
      if (nc > 1u) { workgroupBarrier(); }
      if (live && keyValid) {
        for (var t = 0u; t < bk; t++) {
          let qi = ib + t;
          if (qi >= p.Tq || p.off + qi >= kEnd) { break; } // past the queries, or past this key's subtree
          if (qi < iFirst) { continue; } // query qi does not see this key yet
          var s = 0.0;
          var u = 0.0;
          for (var c = 0u; c < nc; c++) {
            s += partS[(rl * nc + c) * bk + t];
            u += partP[(rl * nc + c) * bk + t];
          }
          let st = ts[t];
          let pt = exp(p.scale * s - st.x);
          let dst = pt * (u - st.y);
          for (var c = 0u; c < cv; c++) {
            let at = t * vecsPerRow + ch * cv + c;
            dv[c] += pt * tb[at];
            dk[c] += dst * ta[at];
          }
        }
      }
      workgroupBarrier();
    }
  }

  if (!live) { return; }
  for (var c = 0u; c < cv; c++) {
    let d = (ch * cv + c) * 4u;
    stOut(kBase, d, p.scale * dk[c]);
    stAux(kBase, d, dv[c]);
  }
}
