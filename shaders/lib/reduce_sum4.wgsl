// reduceSum4(lid, v): the sum of the vec4s v over the workgroup (a tree reduction), returned to every thread.
// The including shader declares: WG (the workgroup size, a power of two) and
// var<workgroup> sums: array<vec4f, WG>. It has barriers: call it in uniform control flow.

fn reduceSum4(lid: u32, v: vec4f) -> vec4f {
  sums[lid] = v;
  workgroupBarrier();
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { sums[lid] += sums[lid + stride]; }
    workgroupBarrier();
  }
  let total = sums[0];
  workgroupBarrier(); // sums may be reused at once
  return total;
}
