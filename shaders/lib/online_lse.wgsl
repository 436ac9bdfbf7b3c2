// The log-sum-exp of a row that one workgroup streams with a strided loop (any length, one exp per element):
//   NEG_BIG        the running max of nothing;
//   lseStep        adds one element to a thread's (max m, sum of exp(x - m)) pair, starting from (NEG_BIG, 0);
//   reduceLse      merges the threads' pairs into the row's logsumexp, returned to every thread.
// The including shader declares: WG (the workgroup size, a power of two) and
// var<workgroup> redM, redS: array<f32, WG>. reduceLse has barriers: call it in uniform control flow.

// A finite stand-in for -inf, so merging two empty partials computes 0 * exp(0) instead of
// 0 * exp(-inf - -inf) = NaN.
const NEG_BIG = -3.0e38;

fn lseStep(ms: vec2f, x: f32) -> vec2f {
  if (x > ms.x) { return vec2f(x, ms.y * exp(ms.x - x) + 1.0); } // a new max: rescale the old sum
  return vec2f(ms.x, ms.y + exp(x - ms.x));
}

fn reduceLse(lid: u32, m: f32, s: f32) -> f32 {
  redM[lid] = m;
  redS[lid] = s;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) {
      let m1 = redM[lid];
      let m2 = redM[lid + stride];
      let mx = max(m1, m2);
      redS[lid] = redS[lid] * exp(m1 - mx) + redS[lid + stride] * exp(m2 - mx);
      redM[lid] = mx;
    }
    workgroupBarrier();
  }
  let lse = redM[0] + log(redS[0]);
  workgroupBarrier(); // redM, redS may be reused at once
  return lse;
}
