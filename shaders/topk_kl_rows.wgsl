// Top-K KL distillation, forward, for CPU drivers (lavapipe): the 'rows' variant of topk_kl.wgsl, with exactly its
// semantics, bindings and outputs (the derivation is there). One invocation per row, no workgroup memory and no
// barriers: lavapipe pays for every barrier and every workgroup-memory access lane by lane, and the workgroup
// kernel's per-row reductions, radix passes and sort of 256 pairs cost it far more than the row's own elements at
// a small vocabulary (about 140 µs a row at V = 1024).
//   1. One pass over the row: both online logsumexps, and the K smallest composite keys (descKey(x_j), j) kept in
//      ascending order in private arrays by insertion. Ids ascend, so an element enters a full list only with a key
//      strictly below the K-th (a tie keeps the lower id, held already); after the first K that is rare (about
//      K ln(V / K) insertions for logits in random order).
//   2. With TAIL, a second pass sums the probability of every token outside the support, as topk_kl.wgsl's 3.
//   3. The K buckets in order (ids by descending logit, ties by lower id), the KL and the backward's coefficients.
#include "lib/topk_kl_io.wgsl"

const MAXK = 256u; // the largest K (TOPK_KL_MAX_K in src/gpu/ops/topk_kl.ts)
const BLOCK = 256u; // elements of a partial sum

#include "lib/grid.wgsl"
#include "lib/lse_step.wgsl"
#include "lib/desc_key.wgsl"
#include "lib/topk_kl_terms.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let r = gridIndex(gid, nwg);
  if (r >= p.R) { return; }
  let base = r * p.V;
  let K = p.K;

  // 1. Both logsumexps and the support in one pass, the sums in blocks of BLOCK elements (one running sum over a
  // full vocabulary of 151,936 lost 2e-4 of a log-prob in f32).
  var selKey: array<u32, MAXK>;
  var selId: array<u32, MAXK>;
  var held = 0u;
  var msS = vec2f(NEG_BIG, 0.0);
  var msT = vec2f(NEG_BIG, 0.0);
  for (var j0 = 0u; j0 < p.V; j0 += BLOCK) {
    var bS = vec2f(NEG_BIG, 0.0);
    var bT = vec2f(NEG_BIG, 0.0);
    for (var j = j0; j < min(j0 + BLOCK, p.V); j++) {
      let x = student[base + j];
      bS = lseStep(bS, x);
      bT = lseStep(bT, teacher[base + j]);
      let key = descKey(x);
      if (held == K && key >= selKey[K - 1u]) { continue; }
      // Insert (key, j) before the larger keys; a full list drops its last.
      var at = min(held, K - 1u);
      while (at > 0u && selKey[at - 1u] > key) {
        selKey[at] = selKey[at - 1u];
        selId[at] = selId[at - 1u];
        at--;
      }
      selKey[at] = key;
      selId[at] = j;
      held = min(held + 1u, K);
    }
    msS = lseMerge(msS, bS);
    msT = lseMerge(msT, bT);
  }
  let lseS = msS.x + log(msS.y);
  let lseT = msT.x + log(msT.y);

  // 2. The tail masses: every token past the threshold (the K-th composite key).
  var tb = vec3f(0.0);
  if (TAIL) {
    let tk = selKey[K - 1u];
    let ti = selId[K - 1u];
    var tailS = 0.0;
    var tailT = 0.0;
    for (var j0 = 0u; j0 < p.V; j0 += BLOCK) {
      var bS = 0.0;
      var bT = 0.0;
      for (var j = j0; j < min(j0 + BLOCK, p.V); j++) {
        let x = student[base + j];
        let key = descKey(x);
        if (key > tk || (key == tk && j > ti)) {
          bS += exp(x - lseS);
          bT += exp(teacher[base + j] - lseT);
        }
      }
      tailS += bS;
      tailT += bT;
    }
    tb = tailBucket(tailS, tailT);
  }

  // 3. The buckets. The log-probs are stored first; with renormalising, both sides' logsumexps over the K follow.
  let o = r * K;
  var lA = 0.0; // what a and b lose to renormalising (0 with TAIL)
  var lB = 0.0;
  var mA = NEG_BIG;
  var mB = NEG_BIG;
  for (var k = 0u; k < K; k++) {
    let id = selId[k];
    let a = student[base + id] - lseS;
    let b = teacher[base + id] - lseT;
    ids[o + k] = i32(id);
    studentLogp[o + k] = a;
    teacherLogp[o + k] = b;
    mA = max(mA, a);
    mB = max(mB, b);
  }
  if (!TAIL) {
    var sA = 0.0;
    var sB = 0.0;
    for (var k = 0u; k < K; k++) {
      sA += exp(studentLogp[o + k] - mA);
      sB += exp(teacherLogp[o + k] - mB);
    }
    lA = mA + log(sA);
    lB = mB + log(sB);
  }
  var kl = tb.x;
  var C = tb.y;
  for (var k = 0u; k < K; k++) {
    let f = bucketTerm(studentLogp[o + k] - lA, teacherLogp[o + k] - lB);
    kl += f.x;
    C += f.y;
    coef[o + k] = f.y; // c_k, until C is known
  }
  for (var k = 0u; k < K; k++) { coef[o + k] -= exp(studentLogp[o + k] - lA) * C; }
  perToken[r] = kl;
  var stat = vec4f(lseS, 0.0, 0.0, 0.0);
  if (TAIL) { stat = vec4f(lseS, tb.z, tb.y, C); }
  stats[4u * r] = stat.x;
  stats[4u * r + 1u] = stat.y;
  stats[4u * r + 2u] = stat.z;
  stats[4u * r + 3u] = stat.w;
}
