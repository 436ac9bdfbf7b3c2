// Top-K KL distillation, forward (ALGORITHM.md section 5). One workgroup per row r of [R, V] logits:
//   1. One pass over the row: online logsumexp of the student (lseS) and teacher (lseT) logits, and a
//      256-bin histogram of the top byte of each student logit's sort key.
//   2. Radix select, 8 bits a pass from the top, of the K smallest composite keys (key(x_j), j), where key
//      reverses the float order: the K largest logits, ties broken by lower token id. Each pass histograms
//      the next byte of the elements still tied with the prefix found so far and keeps the bin holding the
//      K-th; it stops as soon as that whole bin is needed. Four passes settle the logit; only when several
//      tokens share the K-th logit exactly do index passes follow (as many as V's index needs).
//   3. A gather pass collects the K selected (key, id) pairs into workgroup memory (in any order) and,
//      with TAIL, sums the probabilities of every other token: the tail masses P_S, P_T directly, accurate
//      even when the top-K hold almost all of the mass (1 - sum p would cancel).
//   4. A bitonic sort orders the K pairs by descending logit (then id), so ids come out ranked.
//   5. KL over the buckets, per-row loss, and the coefficients the backward needs (topk_kl_grad.wgsl).
// K <= 256 (one selected token per thread); V is streamed and may be any size.
//
// Gradient (teacher is stop-gradient; the chosen ids are constants). Let s_j = z_j - lse(z) be the student
// log-probs, p_j = exp(s_j), S the support, a_k = s_{i_k}, b_k the teacher's log-probs at the same ids.
//   TAIL: buckets S + {tail}, a_tail = log P_S with P_S = sum_{j not in S} p_j (b_tail likewise from P_T).
//     L = sum_B f(a_B, b_B), f = e^a (a - b) (REVERSE, KL(S||T)) or e^b (b - a) (forward, KL(T||S)),
//     c_B = df/da = e^a (a - b + 1) (REVERSE) or -e^b (forward).
//     da_k/dz_j = [j = i_k] - p_j;  da_tail/dz_j = [j not in S] p_j / P_S - p_j.
//     => dL/dz_j = c_k - p_j C                   for j = i_k in S,
//        dL/dz_j = (p_j / P_S) c_tail - p_j C     for j not in S,      with C = sum_k c_k + c_tail.
//     The gradient is dense: every logit moves lse. p_j / P_S <= 1 off the support, computed as
//     exp(s_j - a_tail), so a tiny P_S cannot overflow. P_S is clamped at TINY before the log (guards log 0,
//     e.g. K = V); below the clamp the tail log-prob is a constant and c_tail = 0.
//   renormalised (!TAIL): buckets S only, â_k = a_k - log sum_{l in S} e^{a_l} = z_{i_k} - logsumexp_S(z),
//     so lse(z) cancels: dâ_k/dz_j = [j in S]([j = i_k] - p̂_j), p̂ = e^â, and with ĉ = df/dâ,
//        dL/dz_j = ĉ_k - p̂_j sum_l ĉ_l  for j = i_k in S, and 0 off the support.
// The forward stores coef[r, k] = dL_r/dz at the k-th id, and stats[r] = (lseS, a_tail, c_tail, C) so the
// backward can write the off-support value (p_j / P_S) c_tail - p_j C (0 when renormalised) for every j.
#include "lib/topk_kl_io.wgsl"

override WG: u32; // the workgroup size, set by the host

var<workgroup> redM: array<f32, WG>;
var<workgroup> redS: array<f32, WG>;
var<workgroup> hist: array<atomic<u32>, WG>;
var<workgroup> scanU: array<u32, WG>;
var<workgroup> selKey: array<u32, WG>;
var<workgroup> selId: array<u32, WG>;
var<workgroup> need: u32; // how many of the elements sharing the radix-select prefix are still needed
var<workgroup> taken: atomic<u32>;

#include "lib/reduce_sum.wgsl"
#include "lib/online_lse.wgsl"
#include "lib/radix_select.wgsl"
#include "lib/topk_kl_terms.wgsl"
#include "lib/scan_u32.wgsl"

fn reduceMax(lid: u32, v: f32) -> f32 {
  redM[lid] = v;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { redM[lid] = max(redM[lid], redM[lid + stride]); }
    workgroupBarrier();
  }
  let total = redM[0];
  workgroupBarrier();
  return total;
}

// After a pass's histogram is complete: find the bin holding the need-th element (an inclusive scan of the
// 256 counts; exactly one bin straddles it), extend the prefix by it, and finish when the whole bin is needed.
fn pickBin(lid: u32, level: u32) {
  let want = need; // read by all before the winner rewrites it (the scan's barriers separate the two)
  let c = atomicLoad(&hist[lid]);
  let incl = scanU32(lid, c);
  let excl = incl - c;
  if (excl < want && incl >= want) {
    let left = want - excl;
    need = left;
    extendPrefix(lid, level, c == left); // the whole bin is needed
  }
  workgroupBarrier();
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let r = wid.x + wid.y * nwg.x;
  if (r >= p.R) { return; }
  let base = r * p.V;
  let K = p.K;
  if (lid == 0u) {
    prefKey = 0u;
    prefId = 0u;
    need = K;
    done = 0u;
    atomicStore(&taken, 0u);
  }
  atomicStore(&hist[lid], 0u);
  workgroupBarrier();

  // 1. Both logsumexps and the first histogram in one pass.
  var msS = vec2f(NEG_BIG, 0.0);
  var msT = vec2f(NEG_BIG, 0.0);
  for (var j = lid; j < p.V; j += WG) {
    let x = student[base + j];
    msS = lseStep(msS, x);
    msT = lseStep(msT, teacher[base + j]);
    atomicAdd(&hist[descKey(x) >> 24u], 1u);
  }
  workgroupBarrier();
  let lseS = reduceLse(lid, msS.x, msS.y);
  let lseT = reduceLse(lid, msT.x, msT.y);

  // 2. Radix select. Id passes skip the bytes that are 0 for every id < V.
  var level = 0u;
  loop {
    if (level > 0u) {
      atomicStore(&hist[lid], 0u);
      workgroupBarrier();
      let pk = prefKey;
      let pi = prefId;
      for (var j = lid; j < p.V; j += WG) {
        let key = descKey(student[base + j]);
        if (inPrefix(level, key, j, pk, pi)) { atomicAdd(&hist[digit(level, key, j)], 1u); }
      }
      workgroupBarrier();
    }
    pickBin(lid, level);
    if (workgroupUniformLoad(&done) != 0u) { break; }
    level = nextLevel(level, p.V);
  }

  // 3. Gather the K selected; with TAIL, sum the probability mass of all the others.
  let tk = workgroupUniformLoad(&thrKey);
  let ti = thrId;
  var tailS = 0.0;
  var tailT = 0.0;
  for (var j = lid; j < p.V; j += WG) {
    let x = student[base + j];
    let key = descKey(x);
    if (key < tk || (key == tk && j <= ti)) {
      let slot = atomicAdd(&taken, 1u);
      if (slot < WG) {
        selKey[slot] = key;
        selId[slot] = j;
      }
    } else if (TAIL) {
      tailS += exp(x - lseS);
      tailT += exp(teacher[base + j] - lseT);
    }
  }
  workgroupBarrier();
  if (lid >= K) { // padding sorts last
    selKey[lid] = 0xFFFFFFFFu;
    selId[lid] = 0xFFFFFFFFu;
  }
  workgroupBarrier();

  // 4. Bitonic sort of the 256 (key, id) pairs, ascending.
  for (var size = 2u; size <= WG; size *= 2u) {
    for (var stride = size / 2u; stride > 0u; stride /= 2u) {
      let other = lid ^ stride;
      if (other > lid) {
        let k0 = selKey[lid];
        let i0 = selId[lid];
        let k1 = selKey[other];
        let i1 = selId[other];
        let greater = k0 > k1 || (k0 == k1 && i0 > i1);
        if (greater == ((lid & size) == 0u)) {
          selKey[lid] = k1;
          selId[lid] = i1;
          selKey[other] = k0;
          selId[other] = i0;
        }
      }
      workgroupBarrier();
    }
  }

  // 5. Thread k owns the k-th bucket.
  let owner = lid < K;
  var a = 0.0; // student log-prob at the k-th id
  var b = 0.0; // teacher log-prob at the k-th id
  if (owner) {
    let id = selId[lid];
    a = student[base + id] - lseS;
    b = teacher[base + id] - lseT;
    let o = r * K + lid;
    ids[o] = i32(id);
    studentLogp[o] = a;
    teacherLogp[o] = b;
  }

  var term = 0.0; // this bucket's KL term
  var c = 0.0;    // d term / d (its student log-prob)
  var stat = vec4f(lseS, 0.0, 0.0, 0.0);
  var tailTerm = 0.0;
  if (TAIL) {
    let tb = tailBucket(reduceSum(lid, tailS), reduceSum(lid, tailT));
    tailTerm = tb.x;
    if (owner) {
      let f = bucketTerm(a, b);
      term = f.x;
      c = f.y;
    }
    let C = reduceSum(lid, c) + tb.y;
    if (owner) { coef[r * K + lid] = c - exp(a) * C; }
    stat = vec4f(lseS, tb.z, tb.y, C);
  } else {
    // Renormalise both over the K ids.
    let mA = reduceMax(lid, select(NEG_BIG, a, owner));
    let mB = reduceMax(lid, select(NEG_BIG, b, owner));
    let lA = mA + log(reduceSum(lid, select(0.0, exp(a - mA), owner)));
    let lB = mB + log(reduceSum(lid, select(0.0, exp(b - mB), owner)));
    let ah = a - lA;
    let bh = b - lB;
    if (owner) {
      let f = bucketTerm(ah, bh);
      term = f.x;
      c = f.y;
    }
    let C = reduceSum(lid, c);
    if (owner) { coef[r * K + lid] = c - exp(ah) * C; }
  }
  let kl = reduceSum(lid, term) + tailTerm;
  if (lid == 0u) {
    perToken[r] = kl;
    stats[4u * r] = stat.x;
    stats[4u * r + 1u] = stat.y;
    stats[4u * r + 2u] = stat.z;
    stats[4u * r + 3u] = stat.w;
  }
}
