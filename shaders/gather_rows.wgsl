// Row gather and its inverse for [rows, D] matrices of 32-bit words, idx i32 [M]:
//   gather:      dst[m, :] = src[idx[m], :]      (dst [M, D])
//   scatter:     dst[idx[m], :] = src[m, :]      (dst [rows, D], other rows untouched; idx must be unique)
//   scatter_sum: the gather's gradient where rows repeat (f32): dst[r, :] = sum of src[m, :] over the m with
//                idx[m] = r. Here idx holds, for the U distinct rows r_u: [r_0 .. r_{U-1}], then the offsets
//                [o_0 .. o_U] into the list that follows, then the list of each row's m (o_u .. o_{u+1} - 1),
//                so every output element is one thread's ordered sum (no atomics, the same sums every run).
#include "lib/grid.wgsl"
struct Params { M: u32, D: u32, U: u32 }
#include "lib/params.wgsl"
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read> idx: array<i32>;
@group(0) @binding(3) var<storage, read_write> dst: array<u32>;

@compute @workgroup_size(WG)
fn gather(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gridIndex(gid, nwg);
  if (i >= p.M * p.D) { return; }
  let m = i / p.D;
  let d = i % p.D;
  dst[i] = src[u32(idx[m]) * p.D + d];
}

@compute @workgroup_size(WG)
fn scatter(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gridIndex(gid, nwg);
  if (i >= p.M * p.D) { return; }
  let m = i / p.D;
  let d = i % p.D;
  dst[u32(idx[m]) * p.D + d] = src[i];
}

@compute @workgroup_size(WG)
fn scatter_sum(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gridIndex(gid, nwg);
  if (i >= p.U * p.D) { return; }
  let u = i / p.D;
  let d = i % p.D;
  let first = u32(idx[p.U + u]);
  let last = u32(idx[p.U + u + 1u]);
  var sum = 0.0;
  for (var x = first; x < last; x++) { sum += bitcast<f32>(src[u32(idx[2u * p.U + 1u + x]) * p.D + d]); }
  dst[u32(idx[u]) * p.D + d] = bitcast<u32>(sum);
}
