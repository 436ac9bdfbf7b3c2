// One step of a streamed log-sum-exp (any length, one exp per element), for a row that one thread or many stream:
//   NEG_BIG        the running max of nothing;
//   lseStep        adds one element to a (max m, sum of exp(x - m)) pair, starting from (NEG_BIG, 0);
//   lseMerge       merges two such pairs (partial sums of parts of the row);
// the row's logsumexp is then m + log(sum). Needs nothing declared.

// A finite stand-in for -inf, so merging two empty partials computes 0 * exp(0) instead of
// 0 * exp(-inf - -inf) = NaN.
const NEG_BIG = -3.0e38;

fn lseStep(ms: vec2f, x: f32) -> vec2f {
  if (x > ms.x) { return vec2f(x, ms.y * exp(ms.x - x) + 1.0); } // a new max: rescale the old sum
  return vec2f(ms.x, ms.y + exp(x - ms.x));
}

fn lseMerge(a: vec2f, b: vec2f) -> vec2f {
  let m = max(a.x, b.x);
  return vec2f(m, a.y * exp(a.x - m) + b.y * exp(b.x - m));
}
