// Exponential moving average in place: teacher <- (1 - tau)*teacher + tau*student (the EMA teacher of
// ALGORITHM.md section 1). This form is exact at tau = 0 and tau = 1.
#include "lib/map.wgsl"
struct Params { n: u32, tau: f32 }
@group(0) @binding(1) var<storage, read_write> teacher: array<f32>;
@group(0) @binding(2) var<storage, read> student: array<f32>;

fn size() -> u32 { return p.n; }

fn element(i: u32) {
  teacher[i] = (1.0 - p.tau) * teacher[i] + p.tau * student[i];
}
