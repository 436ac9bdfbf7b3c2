// The entry point of the kernels that run one thread per element, as tfjs-backend-webgpu generates one
// around each elementwise program: thread i of the folded grid runs element(i) when i < size(). The
// including shader declares struct Params (the uniform p), fn size() -> u32 and fn element(i: u32).
#include "lib/grid.wgsl"

#include "lib/params.wgsl"

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gridIndex(gid, nwg);
  if (i < size()) { element(i); }
}
