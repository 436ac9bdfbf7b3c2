// The KL buckets of topk_kl.wgsl and topk_kl_rows.wgsl (the derivation is in topk_kl.wgsl). The including shader
// declares the overrides TAIL and REVERSE.
const TINY = 1e-30; // floor of a tail mass before its log

// A support bucket with student log-prob a and teacher log-prob b: (its term f, c = df/da).
fn bucketTerm(a: f32, b: f32) -> vec2f {
  if (REVERSE) { return vec2f(exp(a) * (a - b), exp(a) * (a - b + 1.0)); }
  return vec2f(exp(b) * (b - a), -exp(b));
}

// The tail bucket from the tail masses pS and pT: (its term, c_tail, a_tail). Below the clamp the tail log-prob is
// a constant, so c_tail = 0.
fn tailBucket(pS: f32, pT: f32) -> vec3f {
  let mS = max(pS, TINY);
  let mT = max(pT, TINY);
  let aT = log(mS);
  let bT = log(mT);
  var f: vec2f;
  if (REVERSE) {
    f = vec2f(mS * (aT - bT), mS * (aT - bT + 1.0));
  } else {
    f = vec2f(mT * (bT - aT), -mT);
  }
  return vec3f(f.x, select(f.y, 0.0, pS < TINY), aT);
}
