// reduceSum(lid, v): the sum of v over the workgroup (a tree reduction), returned to every thread.
// The including shader declares: WG (the workgroup size, a power of two) and
// var<workgroup> redS: array<f32, WG>. It has barriers: call it in uniform control flow.

fn reduceSum(lid: u32, v: f32) -> f32 {
  redS[lid] = v;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { redS[lid] += redS[lid + stride]; }
    workgroupBarrier();
  }
  let total = redS[0];
  workgroupBarrier(); // redS may be reused at once
  return total;
}
