// Row gather and its inverse scatter for [rows, D] matrices of 32-bit words, idx i32 [M]:
//   gather:  dst[m, :] = src[idx[m], :]      (dst [M, D])
//   scatter: dst[idx[m], :] = src[m, :]      (dst [rows, D], other rows untouched; idx must be unique)
#include "lib/grid.wgsl"
struct Params { M: u32, D: u32 }
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
