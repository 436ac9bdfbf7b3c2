enable subgroups;
// Fused causal attention, backward, for CPU drivers whose subgroups are 8 lanes (lavapipe): attention_rows_bwd.wgsl's
// two passes (dq, then dkv; the same semantics and bindings, see there for the formulas; the sums in blocks of
// their own, so not bit for bit), with the work shared across the subgroup as attention_lanes_fwd.wgsl shares it.
// A workgroup is one subgroup of 8 lanes.
//   dq  - lane l owns TR query rows (queryTile), their q and dO in registers; keys come in blocks of 8, lane c
//         loading key j + c's k and v rows, subgroupBroadcast handing them to the others.
//   dkv - lane l owns KR key rows, their k and v in registers; queries come in blocks of 8, lane c loading query
//         i + c's q and dO rows and its (lse, D), broadcast in the same way.
// Loops over the head dim DH (a pipeline constant, a multiple of 4 up to MAXDH) are unrolled, so every register
// tile sits at fixed indices; the loops over keys or queries have the workgroup's bounds, the same in every lane.
@group(0) @binding(5) var<storage, read_write> stats: array<f32>; // [row][lse, D]
@group(0) @binding(6) var<storage, read> dO: array<f32>;
@group(0) @binding(7) var<storage, read_write> out: array<f32>;
@group(0) @binding(8) var<storage, read_write> aux: array<f32>;

override DH: u32; // head dim: a multiple of 4, at most MAXDH
const TR = 4u; // query rows per lane of dq (the host's LANES_TILE)
const KR = 4u; // key rows per lane of dkv (the host's LANES_TILE)
const MAXDH = 64u; // the host's LANES_MAX_HEAD_DIM
#include "lib/attention_rows.wgsl"
#include "lib/attention_lanes.wgsl"

// Elements 4 d4 .. 4 d4 + 3 of the row of dO or aux that starts at `at`.
fn g4(at: u32, d4: u32) -> vec4f {
  return vec4f(dO[at + 4u * d4], dO[at + 4u * d4 + 1u], dO[at + 4u * d4 + 2u], dO[at + 4u * d4 + 3u]);
}
fn aux4(at: u32, d4: u32) -> vec4f {
  return vec4f(aux[at + 4u * d4], aux[at + 4u * d4 + 1u], aux[at + 4u * d4 + 2u], aux[at + 4u * d4 + 3u]);
}

// ---------------------------------------------------------------------------------------- dQ (and D)
@compute @workgroup_size(WG)
fn dq(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  let w = groupKeys(wid);
  if (!w.any) { return; }
  let t = queryTile(wid, lane); // lanes past the last row: every key masked, nothing stored

  // q, dO and D = dO . O (aux holds O in this pass) of this lane's rows; D is stored for the dkv pass.
  var qr: array<array<vec4f, MAXDH / 4u>, TR>;
  var gr: array<array<vec4f, MAXDH / 4u>, TR>;
  var D: array<f32, TR>;
  var lse: array<f32, TR>;
  for (var u = 0u; u < TR; u++) {
    var dot4 = vec4f(0.0);
    for (var d4 = 0u; d4 < DH / 4u; d4++) {
      qr[u][d4] = q4(t.qBase[u], d4);
      gr[u][d4] = g4(t.qBase[u], d4);
      dot4 += gr[u][d4] * aux4(t.qBase[u], d4);
    }
    D[u] = dot(dot4, vec4f(1.0));
    lse[u] = stats[2u * t.row[u]];
  }
  for (var u = 0u; u < TR; u++) {
    if (u < t.nOut) { stats[2u * t.row[u] + 1u] = D[u]; }
  }

  var acc: array<array<vec4f, MAXDH / 4u>, TR>;
  for (var u = 0u; u < TR; u++) {
    for (var d4 = 0u; d4 < DH / 4u; d4++) { acc[u][d4] = vec4f(0.0); }
  }
  for (var j = w.first; j < w.end; j = nextKey(w.b, j + 8u, w.pos, w.end)) {
    let blk = keyBlock(w, j, lane);
    var Sa = array<vec4f, TR>(); // q.k of row u for keys j..j+3
    var Sb = array<vec4f, TR>(); // and j+4..j+7
    var Ta = array<vec4f, TR>(); // dO.v
    var Tb = array<vec4f, TR>();
    for (var d4 = 0u; d4 < DH / 4u; d4++) {
      let kk = lanes8v(k4(blk.at, d4));
      let vv = lanes8v(v4(blk.at, d4));
      for (var u = 0u; u < TR; u++) {
        Sa[u] += dotsLo(qr[u][d4], kk);
        Sb[u] += dotsHi(qr[u][d4], kk);
        Ta[u] += dotsLo(gr[u][d4], vv);
        Tb[u] += dotsHi(gr[u][d4], vv);
      }
    }
    // Sa and Sb become dS = P * (dP - D).
    for (var u = 0u; u < TR; u++) {
      Sa[u] = probsAndGrads(Sa[u], Ta[u], vec4f(lse[u]), vec4f(D[u]), seen(t, u, blk.ja, blk.ea)).dS;
      Sb[u] = probsAndGrads(Sb[u], Tb[u], vec4f(lse[u]), vec4f(D[u]), seen(t, u, blk.jb, blk.eb)).dS;
    }
    for (var d4 = 0u; d4 < DH / 4u; d4++) {
      let kk = lanes8v(k4(blk.at, d4));
      for (var u = 0u; u < TR; u++) { acc[u][d4] += mix8(Sa[u], Sb[u], kk); }
    }
  }
  for (var u = 0u; u < TR; u++) {
    if (u < t.nOut) {
      for (var d4 = 0u; d4 < DH / 4u; d4++) {
        let x = p.scale * acc[u][d4];
        let at = t.qBase[u] + 4u * d4;
        out[at] = x.x;
        out[at + 1u] = x.y;
        out[at + 2u] = x.z;
        out[at + 3u] = x.w;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------- dK, dV
// Workgroup (x, y, z) = (block of WG * KR key rows of [0, cap), kv head, batch). Rows at or past Tk, or before the
// batch's first key, get zero gradients.
@compute @workgroup_size(WG)
fn dkv(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_invocation_id) lane: u32) {
  let G = p.Hq / p.Hkv;
  let b = wid.z;
  let kvh = wid.y;
  let jw0 = wid.x * WG * KR; // the workgroup's first key row
  if (jw0 >= p.cap) { return; }
  let j0 = jw0 + lane * KR; // this lane's key rows: j0 .. j0 + KR - 1
  let ks = firstKey(b);
  // This lane's key rows (past cap: the last one, stored nothing), whether each takes part, and the end of the
  // positions that see it; their k and v in registers.
  var kBase: array<u32, KR>;
  var keyValid: array<bool, KR>;
  var kEnd: array<u32, KR>;
  var kr: array<array<vec4f, MAXDH / 4u>, KR>;
  var vr: array<array<vec4f, MAXDH / 4u>, KR>;
  for (var u = 0u; u < KR; u++) {
    kBase[u] = kvHead(b, kvh) + min(j0 + u, p.cap - 1u) * p.kT;
    keyValid[u] = j0 + u >= ks && j0 + u < p.Tk;
    kEnd[u] = 0u;
    if (keyValid[u]) { kEnd[u] = keyEnd(b, j0 + u); }
    for (var d4 = 0u; d4 < DH / 4u; d4++) {
      kr[u][d4] = k4(kBase[u], d4);
      vr[u][d4] = v4(kBase[u], d4);
    }
  }
  // The queries that see a valid key of the workgroup, i in [iStart, iEnd), the same in every lane.
  let jFirst = max(jw0, ks);
  let jLast = min(jw0 + WG * KR, p.Tk);
  var iStart = p.Tq;
  var iEnd = p.Tq;
  if (jFirst < jLast) {
    iStart = firstQueryAt(b, jFirst);
    iEnd = firstQueryAt(b, keysEnd(b, jFirst, jLast));
  }

  var dk: array<array<vec4f, MAXDH / 4u>, KR>;
  var dv: array<array<vec4f, MAXDH / 4u>, KR>;
  for (var u = 0u; u < KR; u++) {
    for (var d4 = 0u; d4 < DH / 4u; d4++) {
      dk[u][d4] = vec4f(0.0);
      dv[u][d4] = vec4f(0.0);
    }
  }
  for (var g = 0u; g < G; g++) {
    let rowBase = (b * p.Hq + kvh * G + g) * p.Tq; // the head's first row in stats
    let qh = qHead(b, kvh * G + g);
    for (var i = iStart; i < iEnd; i += 8u) {
      // Lane c loads query i + c (clamped to the last one; masked below) and its (lse, D).
      let ic = min(i + lane, p.Tq - 1u);
      let qAt = qh + ic * p.qT;
      let colA = lanesLoU(queryCol(b, ic)); // the queries' positions
      let colB = lanesHiU(queryCol(b, ic));
      let lseA = lanesLo(stats[2u * (rowBase + ic)]);
      let lseB = lanesHi(stats[2u * (rowBase + ic)]);
      let Da = lanesLo(stats[2u * (rowBase + ic) + 1u]);
      let Db = lanesHi(stats[2u * (rowBase + ic) + 1u]);
      var Sa = array<vec4f, KR>(); // key row u's q.k for queries i..i+3
      var Sb = array<vec4f, KR>(); // and i+4..i+7
      var Ua = array<vec4f, KR>(); // dO.v
      var Ub = array<vec4f, KR>();
      for (var d4 = 0u; d4 < DH / 4u; d4++) {
        let qq = lanes8v(q4(qAt, d4));
        let gg = lanes8v(g4(qAt, d4));
        for (var u = 0u; u < KR; u++) {
          Sa[u] += dotsLo(kr[u][d4], qq);
          Sb[u] += dotsHi(kr[u][d4], qq);
          Ua[u] += dotsLo(vr[u][d4], gg);
          Ub[u] += dotsHi(vr[u][d4], gg);
        }
      }
      // Sa and Sb become P, Ua and Ub dS = P * (dP - D).
      let ia = vec4u(i) + IOTA;
      let ib = ia + 4u;
      for (var u = 0u; u < KR; u++) {
        let a = probsAndGrads(Sa[u], Ua[u], lseA, Da, queriesAtSee(j0 + u, kEnd[u], keyValid[u], ia, colA));
        let c = probsAndGrads(Sb[u], Ub[u], lseB, Db, queriesAtSee(j0 + u, kEnd[u], keyValid[u], ib, colB));
        Sa[u] = a.P;
        Sb[u] = c.P;
        Ua[u] = a.dS;
        Ub[u] = c.dS;
      }
      for (var d4 = 0u; d4 < DH / 4u; d4++) {
        let qq = lanes8v(q4(qAt, d4));
        let gg = lanes8v(g4(qAt, d4));
        for (var u = 0u; u < KR; u++) {
          dv[u][d4] += mix8(Sa[u], Sb[u], gg);
          dk[u][d4] += mix8(Ua[u], Ub[u], qq);
        }
      }
    }
  }
  for (var u = 0u; u < KR; u++) {
    if (j0 + u < p.cap) {
      for (var d4 = 0u; d4 < DH / 4u; d4++) {
        let x = p.scale * dk[u][d4];
        let y = dv[u][d4];
        let at = kBase[u] + 4u * d4;
        out[at] = x.x;
        out[at + 1u] = x.y;
        out[at + 2u] = x.z;
        out[at + 3u] = x.w;
        aux[at] = y.x;
        aux[at + 1u] = y.y;
        aux[at + 2u] = y.z;
        aux[at + 3u] = y.w;
      }
    }
  }
}
