// The log-sum-exp of a row that one workgroup streams with a strided loop (any length, one exp per element): each
// thread folds its elements with lseStep (lib/lse_step.wgsl), then
//   reduceLse      merges the threads' pairs into the row's logsumexp, returned to every thread.
// The including shader declares: WG (the workgroup size, a power of two) and
// var<workgroup> redM, redS: array<f32, WG>. reduceLse has barriers: call it in uniform control flow.

#include "lib/lse_step.wgsl"

fn reduceLse(lid: u32, m: f32, s: f32) -> f32 {
  redM[lid] = m;
  redS[lid] = s;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) {
      let ms = lseMerge(vec2f(redM[lid], redS[lid]), vec2f(redM[lid + stride], redS[lid + stride]));
      redM[lid] = ms.x;
      redS[lid] = ms.y;
    }
    workgroupBarrier();
  }
  let lse = redM[0] + log(redS[0]);
  workgroupBarrier(); // redM, redS may be reused at once
  return lse;
}
