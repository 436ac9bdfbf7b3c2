// One AdamW step in place, as torch.optim.AdamW (decoupled weight decay, bias-corrected moments):
//   g = grad * clip                     clip = min(1, max_norm / (norm + 1e-6)) when max_norm > 0, else 1
//   param *= 1 - lr*wd
//   m = m + (1-beta1)*(g - m)           (torch's lerp)
//   v = beta2*v + (1-beta2)*g*g
//   param -= step_size * m / (sqrt(v) / bc2_sqrt + eps)
// with decay = 1 - lr*wd, step_size = lr / (1 - beta1^t), bc2_sqrt = sqrt(1 - beta2^t) and also 1 - beta1,
// 1 - beta2 computed in float64 on the host (1 - beta2 from an f32 beta2 = 0.999 is off by 1e-5, relative).
// `norm` is the global gradient norm computed on the GPU (grad_norm.wgsl): clipping needs no read-back.
#include "lib/map.wgsl"
struct Params {
  n: u32, decay: f32, one_minus_beta1: f32, beta2: f32, one_minus_beta2: f32,
  step_size: f32, bc2_sqrt: f32, eps: f32, max_norm: f32,
}
@group(0) @binding(1) var<storage, read_write> param: array<f32>;
@group(0) @binding(2) var<storage, read> grad: array<f32>;
@group(0) @binding(3) var<storage, read_write> m: array<f32>;
@group(0) @binding(4) var<storage, read_write> v: array<f32>;
@group(0) @binding(5) var<storage, read> norm: array<f32>;

fn size() -> u32 { return p.n; }

fn element(i: u32) {
  var clip = 1.0;
  if (p.max_norm > 0.0) { clip = min(1.0, p.max_norm / (norm[0] + 1e-6)); }
  let g = grad[i] * clip;
  let m1 = m[i] + p.one_minus_beta1 * (g - m[i]);
  let v1 = p.beta2 * v[i] + p.one_minus_beta2 * g * g;
  m[i] = m1;
  v[i] = v1;
  param[i] = param[i] * p.decay - p.step_size * m1 / (sqrt(v1) / p.bc2_sqrt + p.eps);
}
