// Exponential moving average in place: teacher <- (1 - tau)*teacher + tau*student (the EMA teacher of
// ALGORITHM.md section 1). This form is exact at tau = 0 and tau = 1.
override WG: u32; // the workgroup size, set by the host
struct Params { n: u32, tau: f32 }
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> teacher: array<f32>;
@group(0) @binding(2) var<storage, read> student: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= p.n) { return; }
  teacher[i] = (1.0 - p.tau) * teacher[i] + p.tau * student[i];
}
