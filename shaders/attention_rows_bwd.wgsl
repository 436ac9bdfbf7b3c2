// Fused causal attention, backward, for CPU drivers (lavapipe): the 'rows' variant of attention_bwd.wgsl,
// with exactly its semantics and bindings. Probabilities are recomputed from q, k and the forward's
// log-sum-exp. Shapes, masking and GQA as in attention_rows_fwd.wgsl. With s = scale * q.k,
// P = exp(s - lse), dP = dO.v and D_i = sum_j P_ij dP_ij = dO_i . O_i:
//   dS = P * (dP - D),   dQ_i = scale * sum_j dS_ij k_j,   dK_j = scale * sum_i dS_ij q_i,   dV_j = sum_i P_ij dO_i
// where the sums over i for a kv head run over every query of every query head in its group.
//
// Two passes, each owning its outputs (no float atomics):
//   dq  - per query row, over its keys (like the forward). First computes D_i = dO_i . O_i and stores it
//         in stats[row].y for the next pass. Bindings: out = dQ, aux = O (read only here).
//   dkv - per key row, over the queries that see it, of all query heads of its group.
//         Bindings: out = dK, aux = dV.
// Both entries share one binding table (8 storage buffers at most), hence the role-neutral out/aux names.
//
// Work layout as in attention_rows_fwd.wgsl (see there why): no workgroup memory; each invocation owns a
// register tile of rows (TR query rows for dq, KR key rows for dkv) against blocks of 8 keys (dq) or 8 queries
// (dkv) streamed from storage, as two vec4 halves a and b, Sa[u] holding row u's scores against the first
// half. Gradient rows accumulate in private arrays of MAXD floats per row; wider head dimensions go in passes
// over column chunks, each recomputing the scores. Loops over the head dimension go one column at a time. Loop
// bounds come from the uniform: one pipeline per entry point serves every shape.
@group(0) @binding(5) var<storage, read_write> stats: array<f32>; // [row][lse, D]
@group(0) @binding(6) var<storage, read> dO: array<f32>;
@group(0) @binding(7) var<storage, read_write> out: array<f32>;
@group(0) @binding(8) var<storage, read_write> aux: array<f32>;

const TR = 8u; // query rows per dq tile
const KR = 8u; // key rows per dkv tile
const MAXD = 64u; // columns per pass
#include "lib/attention_rows.wgsl"

// ---------------------------------------------------------------------------------------- dQ (and D)
// Workgroup (x, y, z) = (block of WG * TR rows of the kv head's Tq * G (query, group head) pairs in
// query-major order, kv head, batch), as in the forward.
@compute @workgroup_size(WG)
fn dq(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  // This invocation's TR query rows (see queryTile); t.nOut, the rows to store, is a run-time bound, so the
  // store loops are not unrolled.
  let t = queryTile(wid, lid);
  if (t.nOut == 0u) { return; }

  // D = dO . O per row (aux holds O in this pass); stored for the dkv pass. Rows past nOut repeat the last.
  var D: array<f32, TR>;
  var lse: array<f32, TR>;
  for (var u = 0u; u < TR; u++) {
    var dot = 0.0;
    for (var d = 0u; d < p.Dh; d++) { dot += dO[t.qBase[u] + d] * aux[t.qBase[u] + d]; }
    D[u] = dot;
    lse[u] = stats[2u * t.row[u]];
  }
  for (var u = 0u; u < TR; u++) {
    if (u < t.nOut) { stats[2u * t.row[u] + 1u] = D[u]; }
  }

  var acc: array<f32, TR * MAXD>; // [row][column of this pass]
  for (var d0 = 0u; d0 < p.Dh; d0 += MAXD) {
    let d1 = min(d0 + MAXD, p.Dh);
    for (var x = 0u; x < TR * MAXD; x++) { acc[x] = 0.0; }

    // Blocks of 8 keys as in the forward, skipping the subtrees no row of the tile sees.
    for (var j = nextKey(t.b, t.ks, t.pos0, t.end); j < t.end; j = nextKey(t.b, j + 8u, t.pos0, t.end)) {
      // Keys j..j+7 as two vec4 halves; those past t.end are clamped to a valid one and masked below.
      let ja = vec4u(j) + IOTA;
      let jb = ja + 4u;
      let ka = min(ja, vec4u(t.end - 1u)) * p.kT + t.kvBase;
      let kb = min(jb, vec4u(t.end - 1u)) * p.kT + t.kvBase;
      var Sa = array<vec4f, TR>(); // q.k
      var Sb = array<vec4f, TR>();
      var Ta = array<vec4f, TR>(); // dO.v
      var Tb = array<vec4f, TR>();
      for (var d = 0u; d < p.Dh; d++) {
        let kda = vec4f(k[ka.x + d], k[ka.y + d], k[ka.z + d], k[ka.w + d]);
        let kdb = vec4f(k[kb.x + d], k[kb.y + d], k[kb.z + d], k[kb.w + d]);
        let vda = vec4f(v[ka.x + d], v[ka.y + d], v[ka.z + d], v[ka.w + d]);
        let vdb = vec4f(v[kb.x + d], v[kb.y + d], v[kb.z + d], v[kb.w + d]);
        for (var u = 0u; u < TR; u++) {
          let qd = q[t.qBase[u] + d];
          let gd = dO[t.qBase[u] + d];
          Sa[u] += qd * kda;
          Sb[u] += qd * kdb;
          Ta[u] += gd * vda;
          Tb[u] += gd * vdb;
        }
      }
      // Sa and Sb become dS = P * (dP - D).
      let ea = blockEnds(t, ja);
      let eb = blockEnds(t, jb);
      for (var u = 0u; u < TR; u++) {
        Sa[u] = probsAndGrads(Sa[u], Ta[u], vec4f(lse[u]), vec4f(D[u]), seen(t, u, ja, ea)).dS;
        Sb[u] = probsAndGrads(Sb[u], Tb[u], vec4f(lse[u]), vec4f(D[u]), seen(t, u, jb, eb)).dS;
      }
      for (var d = d0; d < d1; d++) {
        let kda = vec4f(k[ka.x + d], k[ka.y + d], k[ka.z + d], k[ka.w + d]);
        let kdb = vec4f(k[kb.x + d], k[kb.y + d], k[kb.z + d], k[kb.w + d]);
        for (var u = 0u; u < TR; u++) { acc[u * MAXD + d - d0] += dot(Sa[u], kda) + dot(Sb[u], kdb); }
      }
    }

    for (var u = 0u; u < t.nOut; u++) {
      for (var d = d0; d < d1; d++) { out[t.qBase[u] + d] = p.scale * acc[u * MAXD + d - d0]; }
    }
  }
}

// ---------------------------------------------------------------------------------------- dK, dV
// Workgroup (x, y, z) = (block of WG * KR key rows of [0, cap), kv head, batch). Rows at or past Tk, or
// before the batch's first key, get zero gradients.
@compute @workgroup_size(WG)
fn dkv(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let G = p.Hq / p.Hkv;
  let b = wid.z;
  let kvh = wid.y;
  let j0 = (wid.x * WG + lid) * KR; // this invocation's key rows: j0 .. j0 + KR - 1
  if (j0 >= p.cap) { return; }
  let nKeys = min(KR, p.cap - j0); // rows to store; a run-time bound, so the store loop is not unrolled
  let ks = firstKey(b);

  // Rows past cap repeat the last one and store nothing. A key row takes part only if valid; kEnd[u] is the end of
  // the positions that see it (keyEnd).
  var kBase: array<u32, KR>;
  var keyValid: array<bool, KR>;
  var kEnd: array<u32, KR>;
  for (var u = 0u; u < KR; u++) {
    kBase[u] = kvHead(b, kvh) + min(j0 + u, p.cap - 1u) * p.kT;
    keyValid[u] = j0 + u >= ks && j0 + u < p.Tk;
    if (keyValid[u]) { kEnd[u] = keyEnd(b, j0 + u); }
  }
  // The queries that see a valid key of the tile: from the first valid key's position (the others see fewer) to
  // before the largest subtree end, i in [iStart, iEnd). None if no valid key.
  let jFirst = max(j0, ks);
  let jLast = min(j0 + KR, p.Tk);
  var iStart = p.Tq;
  var iEnd = p.Tq;
  if (jFirst < jLast) {
    iStart = max(jFirst, p.off) - p.off;
    iEnd = min(p.Tq, max(keysEnd(b, jFirst, jLast), p.off) - p.off);
  }

  var dk: array<f32, KR * MAXD>; // [key row][column of this pass]
  var dv: array<f32, KR * MAXD>;
  for (var d0 = 0u; d0 < p.Dh; d0 += MAXD) {
    let d1 = min(d0 + MAXD, p.Dh);
    for (var x = 0u; x < KR * MAXD; x++) {
      dk[x] = 0.0;
      dv[x] = 0.0;
    }

    for (var g = 0u; g < G; g++) {
      let rowBase = (b * p.Hq + kvh * G + g) * p.Tq; // the head's first row in stats
      let qh = qHead(b, kvh * G + g);
      for (var i = iStart; i < iEnd; i += 8u) {
        // Queries i..i+7 as two vec4 halves; those past Tq are clamped to the last one and masked below.
        let ia = vec4u(i) + IOTA;
        let ib = ia + 4u;
        let ra = rowBase + min(ia, vec4u(p.Tq - 1u));
        let rb = rowBase + min(ib, vec4u(p.Tq - 1u));
        let qa = qh + min(ia, vec4u(p.Tq - 1u)) * p.qT;
        let qb = qh + min(ib, vec4u(p.Tq - 1u)) * p.qT;
        var Sa = array<vec4f, KR>(); // Sa[u]: key row u's q.k for queries i..i+3
        var Sb = array<vec4f, KR>(); // and i+4..i+7
        var Ua = array<vec4f, KR>(); // dO.v
        var Ub = array<vec4f, KR>();
        for (var d = 0u; d < p.Dh; d++) {
          let qda = vec4f(q[qa.x + d], q[qa.y + d], q[qa.z + d], q[qa.w + d]);
          let qdb = vec4f(q[qb.x + d], q[qb.y + d], q[qb.z + d], q[qb.w + d]);
          let gda = vec4f(dO[qa.x + d], dO[qa.y + d], dO[qa.z + d], dO[qa.w + d]);
          let gdb = vec4f(dO[qb.x + d], dO[qb.y + d], dO[qb.z + d], dO[qb.w + d]);
          for (var u = 0u; u < KR; u++) {
            let kd = k[kBase[u] + d];
            let vd = v[kBase[u] + d];
            Sa[u] += kd * qda;
            Sb[u] += kd * qdb;
            Ua[u] += vd * gda;
            Ub[u] += vd * gdb;
          }
        }
        let lseA = vec4f(stats[2u * ra.x], stats[2u * ra.y], stats[2u * ra.z], stats[2u * ra.w]);
        let lseB = vec4f(stats[2u * rb.x], stats[2u * rb.y], stats[2u * rb.z], stats[2u * rb.w]);
        let Da = vec4f(stats[2u * ra.x + 1u], stats[2u * ra.y + 1u], stats[2u * ra.z + 1u], stats[2u * ra.w + 1u]);
        let Db = vec4f(stats[2u * rb.x + 1u], stats[2u * rb.y + 1u], stats[2u * rb.z + 1u], stats[2u * rb.w + 1u]);
        // Sa and Sb become P, Ua and Ub dS = P * (dP - D).
        for (var u = 0u; u < KR; u++) {
          let a = probsAndGrads(Sa[u], Ua[u], lseA, Da, queriesSee(j0 + u, kEnd[u], keyValid[u], ia));
          let c = probsAndGrads(Sb[u], Ub[u], lseB, Db, queriesSee(j0 + u, kEnd[u], keyValid[u], ib));
          Sa[u] = a.P;
          Sb[u] = c.P;
          Ua[u] = a.dS;
          Ub[u] = c.dS;
        }
        for (var d = d0; d < d1; d++) {
          let qda = vec4f(q[qa.x + d], q[qa.y + d], q[qa.z + d], q[qa.w + d]);
          let qdb = vec4f(q[qb.x + d], q[qb.y + d], q[qb.z + d], q[qb.w + d]);
          let gda = vec4f(dO[qa.x + d], dO[qa.y + d], dO[qa.z + d], dO[qa.w + d]);
          let gdb = vec4f(dO[qb.x + d], dO[qb.y + d], dO[qb.z + d], dO[qb.w + d]);
          for (var u = 0u; u < KR; u++) {
            dv[u * MAXD + d - d0] += dot(Sa[u], gda) + dot(Sb[u], gdb);
            dk[u * MAXD + d - d0] += dot(Ua[u], qda) + dot(Ub[u], qdb);
          }
        }
      }
    }

    for (var u = 0u; u < KR; u++) {
      if (u < nKeys) {
        for (var d = d0; d < d1; d++) {
          out[kBase[u] + d] = p.scale * dk[u * MAXD + d - d0];
          aux[kBase[u] + d] = dv[u * MAXD + d - d0];
        }
      }
    }
  }
}
