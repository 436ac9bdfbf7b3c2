// The key-block step of the 'rows' attention forwards (attention_rows_fwd.wgsl, attention_split_fwd.wgsl):
// a tile's TR query rows (QueryTile, lib/attention_rows.wgsl) take keys j..j+7 into their online softmax.
// The kernels differ only in which blocks an invocation takes; this is everything done with one block.
//
// Per row u: m[u] is the running maximum score, l[u] the running sum of exp(score - m[u]), and
// acc[u * MAXD + d - d0] the running sum of exp(score - m[u]) * v[d] over the pass's columns d0..d1.
// Keys past t.end are clamped to a valid one (every load stays in bounds) and masked, as are keys a row does
// not see (seen: j >= rowEnd[u], or a subtree that does not hold the row).

fn foldKeyBlock(
  t: QueryTile,
  j: u32,
  d0: u32,
  d1: u32,
  m: ptr<function, array<f32, TR>>,
  l: ptr<function, array<f32, TR>>,
  acc: ptr<function, array<f32, TR * MAXD>>,
) {
  // Keys j..j+7 as two vec4 halves.
  let ja = vec4u(j) + IOTA;
  let jb = ja + 4u;
  let ka = min(ja, vec4u(t.end - 1u)) * p.kT + t.kvBase;
  let kb = min(jb, vec4u(t.end - 1u)) * p.kT + t.kvBase;
  var Sa = array<vec4f, TR>(); // Sa[u]: row u's scores for keys j..j+3
  var Sb = array<vec4f, TR>(); // and j+4..j+7
  for (var d = 0u; d < p.Dh; d++) {
    let kda = vec4f(k[ka.x + d], k[ka.y + d], k[ka.z + d], k[ka.w + d]);
    let kdb = vec4f(k[kb.x + d], k[kb.y + d], k[kb.z + d], k[kb.w + d]);
    for (var u = 0u; u < TR; u++) {
      let qd = q[t.qBase[u] + d];
      Sa[u] += qd * kda;
      Sb[u] += qd * kdb;
    }
  }
  // Sa and Sb become the rows' probabilities, against the new maxima.
  let ea = blockEnds(t, ja);
  let eb = blockEnds(t, jb);
  var alpha: array<f32, TR>;
  for (var u = 0u; u < TR; u++) {
    let r = softmaxStep(Sa[u], Sb[u], seen(t, u, ja, ea), seen(t, u, jb, eb), (*m)[u], (*l)[u]);
    alpha[u] = r.alpha;
    Sa[u] = r.wa;
    Sb[u] = r.wb;
    (*l)[u] = r.l;
    (*m)[u] = r.m;
  }
  for (var d = d0; d < d1; d++) {
    let vda = vec4f(v[ka.x + d], v[ka.y + d], v[ka.z + d], v[ka.w + d]);
    let vdb = vec4f(v[kb.x + d], v[kb.y + d], v[kb.z + d], v[kb.w + d]);
    for (var u = 0u; u < TR; u++) {
      let at = u * MAXD + d - d0;
      (*acc)[at] = alpha[u] * (*acc)[at] + dot(Sa[u], vda) + dot(Sb[u], vdb);
    }
  }
}
